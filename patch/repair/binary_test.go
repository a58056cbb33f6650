package repair

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/patchbench/patchbench/patch"
)

// binaryCase is the golden case of git diff --binary output: a delta, a
// literal modification, a deletion and a creation, with the files before
// and after.
func binaryCase(t *testing.T) (text string, old, new patch.MapFS) {
	t.Helper()
	ar, err := txtar.ParseFile("../testdata/formats/udiff-binary-apply.txtar")
	if err != nil {
		t.Fatal(err)
	}
	old, new = patch.MapFS{}, patch.MapFS{}
	for _, f := range ar.Files {
		switch {
		case f.Name == "patch":
			text = string(f.Data)
		case strings.HasPrefix(f.Name, "old/"):
			old[f.Name[4:]] = string(f.Data)
		case strings.HasPrefix(f.Name, "new/"):
			new[f.Name[4:]] = string(f.Data)
		}
	}
	if text == "" || len(old) == 0 || len(new) == 0 {
		t.Fatal("the golden case lacks its patch or files")
	}
	return text, old, new
}

// final applies the results to a copy of files.
func final(files patch.MapFS, results []patch.FileResult) patch.MapFS {
	out := maps.Clone(files)
	_, content, _ := patch.Final(results)
	for p, c := range content {
		if c == nil {
			delete(out, p)
		} else {
			out[p] = string(c)
		}
	}
	return out
}

// TestRepairBinaryPassesThrough: the tolerant path applies the binary
// sections of a patch exactly as the strict one does, forward and in
// reverse, while it repairs the text sections of the same patch; its
// canonical patch keeps the binary changes.
func TestRepairBinaryPassesThrough(t *testing.T) {
	text, old, new := binaryCase(t)
	// A text file in the same patch, written the way models break it: no
	// counts in the header, a context line without its space.
	old["notes.txt"] = "alpha\n    beta\ngamma\n"
	new["notes.txt"] = "alpha\n    beta\nGAMMA\n"
	text = "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ @@\n alpha\n    beta\n-gamma\n+GAMMA\n" + text
	for _, tc := range []struct {
		name     string
		from, to patch.MapFS
		reverse  bool
	}{{"forward", old, new, false}, {"reverse", new, old, true}} {
		res, err := Repair(text, Options{FS: tc.from, Reverse: tc.reverse})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := final(tc.from, res.Results)
		if !maps.Equal(got, tc.to) {
			t.Fatalf("%s: files differ from the expected ones", tc.name)
		}
		if len(res.Files) != 5 || !strings.Contains(strings.Join(res.Files[0].Hunks[0].Repairs, ","), "context-space") {
			t.Fatalf("%s: reports %+v, want five files and a context-space repair on the text file", tc.name, res.Files)
		}
		// The canonical patch, applied strictly, makes the same files.
		c := res.Canonical()
		printed, err := patch.Print(c, patch.UDiff)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(printed, "GIT binary patch\n") != 4 {
			t.Fatalf("%s: canonical patch does not keep the four binary changes:\n%s", tc.name, printed)
		}
		q, err := patch.ParseUDiff(printed, patch.DefaultParseOptions)
		if err != nil {
			t.Fatal(err)
		}
		again, err := patch.Apply(q, tc.from, patch.ApplyOptions{})
		if err != nil {
			t.Fatalf("%s: canonical patch: %v", tc.name, err)
		}
		if !maps.Equal(final(tc.from, again), tc.to) {
			t.Fatalf("%s: canonical patch makes other files", tc.name)
		}
	}
}

func TestRepairBinaryRefusals(t *testing.T) {
	text, old, _ := binaryCase(t)
	textPart := "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ @@\n alpha\n-gamma\n+GAMMA\n"
	withNotes := func(m patch.MapFS) patch.MapFS {
		m = maps.Clone(m)
		m["notes.txt"] = "alpha\ngamma\n"
		return m
	}
	wrong := withNotes(old)
	wrong["mod.dat"] = "line one\nline TWO\nline three\n"
	for _, tc := range []struct {
		name   string
		text   string
		files  patch.MapFS
		status string
		reason string
	}{
		// Binary is never repaired: a preimage off by one byte refuses the
		// whole patch, the text file included.
		{"wrong-preimage", textPart + text, wrong, StatusRefused, "mod.dat: refused: apply: mod.dat: binary content does not match the patch"},
		{"no-data", "diff --git a/img.png b/img.png\nindex 9fc36a0..26a8a86 100644\nBinary files a/img.png and b/img.png differ\n",
			patch.MapFS{"img.png": "\x00"}, StatusRefused, "img.png: refused: apply: img.png: binary change without data"},
		{"corrupt", textPart + strings.Replace(text, "gcmd1F%u7|s&r9XX0WpjqR7plrDpVvbzqE)80Pw#IkpKVy", "gcmd1F%u7|s&r9XX0WpjqR7plrDpVvbzqE)80Pw#IkpKV", 1),
			withNotes(old), StatusRefused, "parse udiff: line 31: GIT binary patch: data line of 45 characters"},
		{"gnu-no-data", "Binary files a/img.png and b/img.png differ\n" + textPart, withNotes(patch.MapFS{"img.png": "\x00"}), StatusRefused,
			"img.png: refused: apply: img.png: binary change without data"},
		{"gnu-in-prose", "The diff:\n\nBinary files a/img.png and b/img.png differ\n" + textPart + "\nThat should do it.\n", withNotes(patch.MapFS{"img.png": "\x00"}), StatusRefused,
			"img.png: refused: apply: img.png: binary change without data"},
		{"missing", text, patch.MapFS{"gone.dat": old["gone.dat"], "big.dat": old["big.dat"]}, StatusRefused, "mod.dat: refused: the file does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Repair(tc.text, Options{FS: tc.files})
			if err == nil {
				t.Fatal("applied")
			}
			if res.Status != tc.status || !strings.Contains(err.Error(), tc.reason) || res.Results != nil {
				t.Fatalf("status %s, error %v; want %s with %q and no results", res.Status, err, tc.status, tc.reason)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T", err)
			}
		})
	}
}

// TestRepairBinaryAlreadyApplied: binary sections whose files already have
// the content they make are a success that writes nothing.
func TestRepairBinaryAlreadyApplied(t *testing.T) {
	text, _, new := binaryCase(t)
	// The sections that modify big.dat and mod.dat.
	modifications := text[:strings.Index(text, "diff --git a/gone.dat")] + text[strings.Index(text, "diff --git a/mod.dat"):strings.Index(text, "diff --git a/new.dat")]
	res, err := Repair(modifications, Options{FS: new})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusAlreadyApplied || len(res.Results) != 0 || len(res.Files) != 2 {
		t.Fatalf("status %s, %d results, %d files; want already_applied, none, 2", res.Status, len(res.Results), len(res.Files))
	}
	for _, fr := range res.Files {
		if fr.Status != StatusAlreadyApplied || fr.Reason != "the file already has the content the binary patch makes" {
			t.Errorf("%s: %s (%s)", fr.Path, fr.Status, fr.Reason)
		}
	}
}

// TestRepairBinaryCRLF: a patch that went through a CRLF channel still
// applies its binary sections: the carriage returns are transport.
func TestRepairBinaryCRLF(t *testing.T) {
	text, old, new := binaryCase(t)
	res, err := Repair(strings.ReplaceAll(text, "\n", "\r\n"), Options{FS: old})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(final(old, res.Results), new) {
		t.Fatal("files differ from the expected ones")
	}
}

// TestRepairReverseDeletion: undoing a deletion creates the file under its
// own name, not under git's "a/" name.
func TestRepairReverseDeletion(t *testing.T) {
	text := "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
	res, err := Repair(text, Options{FS: patch.MapFS{}, Reverse: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].Path != "gone.txt" || res.Results[0].Op != patch.Create || string(res.Results[0].Content) != "x\n" {
		t.Fatalf("results %+v, want gone.txt created with x", res.Results)
	}
}

// TestRepairBinaryInProse: a binary patch in a model's answer, fenced or
// bare between prose, is taken out whole, its data lines included, and
// the prose after it left out.
func TestRepairBinaryInProse(t *testing.T) {
	text, old, new := binaryCase(t)
	for _, tc := range []struct{ answer, source string }{
		{"Here is the patch:\n\n```diff\n" + text + "```\nDone.\n", "```diff fence (lines 3-42)"},
		{"Here is the patch:\n\n" + text + "\nThat is all.\n", "raw diff (lines 3-40)"},
	} {
		res, err := Repair(tc.answer, Options{FS: old})
		if err != nil {
			t.Fatalf("%s: %v", tc.source, err)
		}
		if res.Extracted != tc.source {
			t.Errorf("extracted from %q, want %q", res.Extracted, tc.source)
		}
		if !maps.Equal(final(old, res.Results), new) {
			t.Errorf("%s: files differ from the expected ones", tc.source)
		}
	}
}
