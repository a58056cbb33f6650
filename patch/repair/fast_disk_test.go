package repair_test

// The fast path against the engine through the files on disk: the same
// patch applied by ApplyReader and ApplyText (which may take the fast
// path) and by Apply (which never does) must leave the same bytes and modes, the same
// error and kind, and the same JSON report, under every option set.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// diskOutcome is what an apply did on disk and said.
type diskOutcome struct {
	Err    string
	Kind   string
	Report string
	Files  map[string]string
	Modes  map[string]os.FileMode
}

// The ways to apply a patch text: Apply (the engine only), ApplyReader
// from a file and ApplyText (the fast path may take either).
const (
	viaEngine = "engine"
	viaReader = "reader"
	viaText   = "text"
)

// applyOnDisk writes files to a new directory, applies text to it via
// one of the ways, and returns what happened.
func applyOnDisk(t *testing.T, files map[string]string, modes map[string]os.FileMode, text string, opts repair.ApplyOptions, via string) diskOutcome {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if strings.HasPrefix(content, "->") {
			if err := os.Symlink(content[2:], p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if m, ok := modes[name]; ok {
			os.Chmod(p, m)
		}
	}
	pf := filepath.Join(t.TempDir(), "p.diff")
	os.WriteFile(pf, []byte(text), 0o644)
	root, err := patch.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	opts.Name = "p.diff"
	var rep *repair.Report
	switch via {
	case viaReader:
		f, _ := os.Open(pf)
		defer f.Close()
		rep, err = repair.ApplyReader(root, f, int64(len(text)), opts)
	case viaText:
		rep, err = repair.ApplyText(root, text, opts)
	default:
		rep, err = repair.Apply(root, text, opts)
	}
	var o diskOutcome
	if err != nil {
		o.Err, o.Kind = err.Error(), fmt.Sprint(repair.KindOf(err))
	}
	js, _ := json.Marshal(rep)
	o.Report = string(js)
	o.Files, o.Modes = map[string]string{}, map[string]os.FileMode{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, ".patchbench") {
			return nil
		}
		o.Modes[rel] = fi.Mode()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			o.Files[rel] = string(b)
		}
		return nil
	})
	return o
}

// TestFastPathVsEngineOnDisk: modes (an executable file, an index line
// naming another mode), a read-only file, a symbolic link, a directory,
// a missing file, an a/f beside f, trailing text, a second file section,
// each under default, brief, strict, check, reverse and fixed -p1.
func TestFastPathVsEngineOnDisk(t *testing.T) {
	old, neu, diff := testdata.ManyHunks(400)
	t.Logf("diff %d bytes", len(diff))
	type tc struct {
		name  string
		fast  bool // the fast path takes it forward
		files map[string]string
		modes map[string]os.FileMode
		text  string
	}
	cases := []tc{
		{"plain", true, map[string]string{"f": old}, nil, diff},
		{"applied", false, map[string]string{"f": neu}, nil, diff},
		{"exec file", true, map[string]string{"f": old}, map[string]os.FileMode{"f": 0o755}, diff},
		{"index 100755 on 644", true, map[string]string{"f": old}, nil, strings.Replace(diff, "--- a/f", "index 1234567..89abcde 100755\n--- a/f", 1)},
		{"index 100644 on 755", true, map[string]string{"f": old}, map[string]os.FileMode{"f": 0o755}, strings.Replace(diff, "--- a/f", "index 1234567..89abcde 100644\n--- a/f", 1)},
		{"read-only", true, map[string]string{"f": old}, map[string]os.FileMode{"f": 0o444}, diff},
		{"symlink", false, map[string]string{"f": "->g", "g": old}, nil, diff},
		{"a file line of 200 KiB after the hunks", true, map[string]string{"f": old + strings.Repeat("x", 200<<10) + "\n"}, nil, diff},
		{"a file line of 200 KiB without newline", true, map[string]string{"f": old + strings.Repeat("x", 200<<10)}, nil, diff},
		{"NUL and CR after the hunks", true, map[string]string{"f": old + "\x00\r\xff\r"}, nil, diff},
		{"a patch line of 100 KiB", false, map[string]string{"f": old + "y\nw\n"}, nil, diff + "@@ -3201,2 +3201,2 @@\n y\n-w\n+" + strings.Repeat("z", 100<<10) + "\n"},
		{"the same hunk with a short line", true, map[string]string{"f": old + "y\nw\n"}, nil, diff + "@@ -3201,2 +3201,2 @@\n y\n-w\n+z\n"},
		{"directory", false, map[string]string{"f/x": old}, nil, diff},
		{"missing", false, map[string]string{"g": old}, nil, diff},
		{"a/f exists too", true, map[string]string{"f": old, "a/f": old}, nil, diff},
		{"trailing garbage", false, map[string]string{"f": old}, nil, diff + "garbage\n"},
		{"trailing sig", false, map[string]string{"f": old}, nil, diff + "-- \n2.40.0\n"},
		{"second file", false, map[string]string{"f": old, "g": old}, nil, diff + strings.ReplaceAll(diff[:2000], "/f", "/g")},
	}
	optss := map[string]repair.ApplyOptions{
		"default":      {Strip: 1},
		"brief":        {Strip: 1, Brief: true},
		"strict":       {Strip: 1, Strict: true},
		"check":        {Strip: 1, Check: true},
		"reverse":      {Strip: 1, Reverse: true},
		"strict-rev":   {Strip: 1, Strict: true, Reverse: true},
		"p1 fixed":     {Strip: 1, FixedStrip: true},
		"strict check": {Strip: 1, Strict: true, Check: true},
	}
	for _, c := range cases {
		for on, opts := range optss {
			t.Run(c.name+"/"+on, func(t *testing.T) {
				e := applyOnDisk(t, c.files, c.modes, c.text, opts, viaEngine)
				for _, via := range []string{viaReader, viaText} {
					f := applyOnDisk(t, c.files, c.modes, c.text, opts, via)
					e := e
					if opts.Brief {
						// Only the fast path leaves the hunks out.
						if fast := e.Report != f.Report; fast != c.fast {
							t.Errorf("%s: fast path taken: %v, want %v", via, fast, c.fast)
						}
						e.Report, f.Report = "", ""
					}
					if d := cmp.Diff(e, f); d != "" {
						t.Errorf("(-engine +%s):\n%s", via, d)
					}
				}
			})
		}
	}
}

// TestFastPathFileChangedBeforeWrite: a file changed after the check and
// before the write (here by the Guard) is where the fast path decides
// otherwise than the engine, by design: the engine writes the content it
// computed from the file it read, losing the change; the fast path's
// second pass sees a file other than the one it checked and refuses
// (KindWrite), the change kept, with an error that says so.
func TestFastPathFileChangedBeforeWrite(t *testing.T) {
	old, neu, diff := testdata.ManyHunks(400)
	for _, mut := range []struct{ name, content string }{
		{"outside the hunks", "prepended\n" + old},
		{"same size", strings.Replace(old, "line 0 of", "LINE 0 of", 1)},
	} {
		for _, via := range []string{viaEngine, viaReader, viaText} {
			stream := via != viaEngine
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			root, err := patch.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			opts := repair.ApplyOptions{Name: "p.diff", Strip: 1, Guard: func() (func(), error) {
				return func() {}, os.WriteFile(p, []byte(mut.content), 0o644)
			}}
			switch via {
			case viaReader:
				_, err = repair.ApplyReader(root, strings.NewReader(diff), int64(len(diff)), opts)
			case viaText:
				_, err = repair.ApplyText(root, diff, opts)
			default:
				_, err = repair.Apply(root, diff, opts)
			}
			root.Close()
			got, _ := os.ReadFile(p)
			switch {
			case !stream && (err != nil || string(got) != neu):
				t.Errorf("%s, engine: %v, new content written: %v", mut.name, err, string(got) == neu)
			case stream && (repair.KindOf(err) != repair.KindWrite || string(got) != mut.content):
				t.Errorf("%s, fast path (%s): %v (kind %v), the change kept: %v", mut.name, via, err, repair.KindOf(err), string(got) == mut.content)
			case stream && err.Error() != "write f: p.diff: the patch or f changed while it was applied":
				t.Errorf("%s, fast path (%s): error %q", mut.name, via, err)
			}
		}
	}
}
