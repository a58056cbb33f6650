package envstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestManifestDelta builds the same history into a store of format 1
// (every manifest in full) and one of format 2 (manifests stored against
// a base where that is smaller): every manifest reads the same from both,
// the second's take fewer bytes, each restores the same tree, and a base
// that is gone or changed makes its manifests refused, never read short.
func TestManifestDelta(t *testing.T) {
	ctx := context.Background()
	repoDir, commits := makeHistory(t, "go", 12)
	r := openRepo(t, repoDir)
	v1 := openStore(t, filepath.Join(t.TempDir(), "v1"))
	if err := os.WriteFile(filepath.Join(v1.Dir(), "format"), []byte(formatLineV1), 0o644); err != nil {
		t.Fatal(err)
	}
	v1, err := OpenExisting(v1.Dir())
	if err != nil {
		t.Fatal(err)
	}
	v2 := openStore(t, filepath.Join(t.TempDir(), "v2"))
	for _, s := range []*Store{v1, v2} {
		// Two runs: the second process finds its base on disk.
		for _, part := range [][]string{commits[:6], commits[6:]} {
			s, err := OpenExisting(s.Dir())
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Build(ctx, r, part, BuildOptions{Setup: "true", Runner: runner(), Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, br := range res {
				if br.Status != StatusBuilt {
					t.Fatalf("%s: %s %s", br.Commit, br.Status, br.Reason)
				}
			}
		}
	}
	against := map[string]string{}
	for _, c := range commits {
		f1, _, err := v1.readManifestFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if f1.Base != nil {
			t.Errorf("format 1: %s is stored against %s", c, f1.Base.Commit)
		}
		f2, _, err := v2.readManifestFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if f2.Base != nil {
			against[c] = f2.Base.Commit
		}
		m1, err := v1.Manifest(c)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := v2.Manifest(c)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(m1.Entries, m2.Entries); diff != "" {
			t.Errorf("%s: entries differ between format 1 and 2 (-1 +2):\n%s", c, diff)
		}
		if m1.Commit != m2.Commit || m1.Setup != m2.Setup || m1.SourceDateEpoch != m2.SourceDateEpoch || m1.PythonHashSeed != m2.PythonHashSeed {
			t.Errorf("%s: fields differ: %+v, %+v", c, m1, m2)
		}
		d1, d2 := filepath.Join(t.TempDir(), "1"), filepath.Join(t.TempDir(), "2")
		for _, x := range []struct {
			s    *Store
			dest string
		}{{v1, d1}, {v2, d2}} {
			if _, err := x.s.Restore(ctx, c, x.dest, RestoreOptions{Method: RestoreCopy}); err != nil {
				t.Fatal(err)
			}
		}
		compareTrees(t, readTree(t, d1), readTree(t, d2), false)
	}
	if len(against) < len(commits)/2 {
		t.Errorf("format 2: %d of %d manifests stored against a base, want most", len(against), len(commits))
	}
	st1, _ := v1.Stats()
	st2, _ := v2.Stats()
	if st2.ManifestBytes*2 > st1.ManifestBytes || st2.LogicalBytes != st1.LogicalBytes {
		t.Errorf("manifests take %d bytes against a base, %d in full; trees %d and %d bytes", st2.ManifestBytes, st1.ManifestBytes, st2.LogicalBytes, st1.LogicalBytes)
	}
	mustVerify(t, v2)

	// A base changed (same commit, other bytes) or gone: the manifests
	// stored against it are refused, naming it.
	var delta, base string
	for c, b := range against {
		delta, base = c, b
		break
	}
	bp := v2.manifestPath(base)
	orig, err := os.ReadFile(bp)
	if err != nil {
		t.Fatal(err)
	}
	m, err := v2.Manifest(base)
	if err != nil {
		t.Fatal(err)
	}
	m.Entries = m.Entries[:len(m.Entries)-1]
	changed, err := encodeManifest(&manifestFile{Manifest: *m})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		write func()
		want  string
	}{
		{"changed", func() { os.Remove(bp); os.WriteFile(bp, changed, 0o444) }, "hashes to"},
		{"gone", func() { os.Remove(bp) }, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.write()
			defer func() { os.Remove(bp); os.WriteFile(bp, orig, 0o444) }()
			_, err := v2.Manifest(delta)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), base) {
				t.Errorf("manifest of %s with its base %s: %v, want an error naming the base (%q)", delta, tc.name, err, tc.want)
			}
			dest := filepath.Join(t.TempDir(), "r")
			if _, err := v2.Restore(ctx, delta, dest, RestoreOptions{Method: RestoreCopy}); err == nil {
				t.Errorf("restore with its base %s: no error", tc.name)
			}
			if _, err := os.Lstat(dest); err == nil {
				t.Errorf("restore with its base %s left %s", tc.name, dest)
			}
			rep, err := v2.Verify(ctx, 0)
			if err != nil || rep.OK() {
				t.Errorf("verify with a base %s: %v, %q", tc.name, err, rep.Problems)
			}
			before, _ := v2.objects(nil)
			if _, err := v2.GC(ctx); err == nil {
				t.Errorf("gc with a base %s: no error", tc.name)
			}
			if after, _ := v2.objects(nil); len(after) != len(before) {
				t.Errorf("gc with a base %s removed %d objects", tc.name, len(before)-len(after))
			}
		})
	}
}

// TestGitmapOnce: a blob the git map has, learned again (by two builds at
// once, or by two paths of one tree), adds no line.
func TestGitmapOnce(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "s"))
	h1, h2 := strings.Repeat("1", 64), strings.Repeat("2", 64)
	blob1, blob2 := strings.Repeat("a", 40), strings.Repeat("b", 40)
	s.knownBlobs()
	for _, lines := range [][]string{
		{blob1 + " " + h1 + "\n", blob1 + " " + h1 + "\n"},
		{blob1 + " " + h1 + "\n", blob2 + " " + h2 + "\n"},
		{blob2 + " " + h2 + "\n"},
	} {
		if err := s.learnBlobs(lines); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(s.Dir(), "gitmap"))
	if err != nil {
		t.Fatal(err)
	}
	if want := blob1 + " " + h1 + "\n" + blob2 + " " + h2 + "\n"; string(b) != want {
		t.Errorf("gitmap:\n%s\nwant:\n%s", b, want)
	}
}
