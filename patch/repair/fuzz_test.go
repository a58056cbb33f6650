package repair_test

import (
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// FuzzRepair feeds the tolerant parser and locator arbitrary patches and
// files. It must not panic, and whatever it applies must come with a
// canonical patch that strict apply turns into the same content.
func FuzzRepair(f *testing.F) {
	f.Add("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "a\nb\nc\n")
	f.Add("@@ @@\na\n-b\n+B\nc\n", "x\na\nb\nc\ny\n")
	f.Add("```diff\n--- f\n+++ f\n@@ -2,2 +2,2 @@\n-b\n+B\n c\n```\nDone.", "a\nb\nc\n")
	f.Add("f\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n", "a\nb\nc\n")
	f.Add("*** Begin Patch\n*** Update File: f\n@@ a\n-b\n+B\n*** End Patch\n", "a\nb\nc\n")
	f.Add("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n    # ... existing code ...\n-c\n+C\n", "a\nb\nc\r\n")
	f.Fuzz(func(t *testing.T, text, file string) {
		res, err := repair.Repair(text, repair.Options{Target: "f", FS: patch.MapFS{"f": file}})
		if err != nil {
			if res == nil || res.Results != nil {
				t.Fatalf("an error must come with a result and no contents: %v", err)
			}
			return
		}
		if res.Status == repair.StatusAlreadyApplied {
			// A hunk that changes nothing where it fits is already there.
			if len(res.Results) != 0 {
				t.Fatalf("already applied with %d results", len(res.Results))
			}
			return
		}
		if len(res.Results) != 1 {
			t.Fatalf("%d results for one target", len(res.Results))
		}
		want := res.Results[0]
		c := res.Canonical()
		printed, err := patch.Print(c, patch.UDiff)
		if err != nil {
			t.Fatalf("canonical patch does not print: %v", err)
		}
		if printed == "" {
			if want.Op != patch.Delete && string(want.Content) != file {
				t.Fatalf("empty canonical patch for a change")
			}
			return
		}
		p, err := patch.ParseUDiff(printed, patch.DefaultParseOptions)
		if err != nil {
			t.Fatalf("canonical patch does not parse: %v\n%s", err, printed)
		}
		got, err := patch.Apply(p, patch.MapFS{"f": file}, patch.ApplyOptions{})
		if err != nil {
			t.Fatalf("canonical patch does not apply strictly: %v\n%s", err, printed)
		}
		if want.Op != patch.Delete && string(got[0].Content) != string(want.Content) {
			t.Fatalf("canonical patch gives other content\n%s", printed)
		}
	})
}
