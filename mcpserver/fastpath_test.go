package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/internal/testtree"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestApplyPatchFastPath: apply_patch of a large git diff (2,000 hunks,
// 420 KB) answers what the engine (repair.Apply) answers and leaves the
// same bytes, forward, again (already applied), as a dry run, reversed,
// strict, and with a hunk a line early (which the fast path leaves to
// the engine). Where the fast path takes it, the call allocates less, by
// more than half of what the engine's apply of the patch allocates, than
// the same call with target "f", which goes to the engine (the engine
// holds the text's lines, the parsed hunks and the file's lines; the fast
// path streams): were apply_patch on the engine, the two would allocate
// alike.
func TestApplyPatchFastPath(t *testing.T) {
	old, neu, diff := testdata.ManyHunks(2000)
	// Hunk 1001, at line 8002, one line early.
	off := strings.Replace(diff, "@@ -8002,7 +8002,7 @@", "@@ -8001,7 +8001,7 @@", 1)
	if off == diff || len(diff) > MaxToolPatchBytes {
		t.Fatalf("the cases are not what they say (%d bytes)", len(diff))
	}
	tests := []struct {
		name, before, after, patch string
		args                       map[string]any
		fast                       bool
	}{
		{"apply", old, neu, diff, nil, true},
		{"again", neu, neu, diff, nil, false},
		{"dry run", old, old, diff, map[string]any{"dry_run": true}, true},
		{"reverse", neu, old, diff, map[string]any{"reverse": true}, true},
		{"strict", old, neu, diff, map[string]any{"strict": true}, true},
		{"a hunk a line early", old, neu, off, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"patch": tc.patch}
			for k, v := range tc.args {
				args[k] = v
			}
			raw, err := json.Marshal(args)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			testtree.Write(t, dir, map[string]string{"f": tc.before})
			s := &engineTools{dir: dir, writeLock: make(chan struct{}, 1)}
			ans, alloc := allocated(func() Answer { return s.applyPatch(context.Background(), raw) })
			a, ok := ans.Structured.(ApplyAnswer)
			if !ok || ans.Failed {
				t.Fatalf("answer %.300s", ans.Text)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != tc.after {
				t.Errorf("f after the call is not the file wanted")
			}

			// The engine, on a copy.
			_, root := testtree.Root(t, map[string]string{"f": tc.before})
			opts := repair.ApplyOptions{Name: "-", Strip: 1, Check: tc.args["dry_run"] == true,
				Reverse: tc.args["reverse"] == true, Strict: tc.args["strict"] == true}
			rep, engineAlloc := allocated(func() *repair.Report {
				rep, err := repair.Apply(root, tc.patch, opts)
				if err != nil {
					t.Fatalf("engine: %v", err)
				}
				return rep
			})
			want := ApplyAnswer{Report: *rep}
			want.clip()
			if d := cmp.Diff(jsonOf(t, want.Report), jsonOf(t, a.Report)); d != "" || a.HunksOmitted != want.HunksOmitted {
				t.Errorf("report (-engine +apply_patch), %d and %d hunks omitted:\n%.3000s", want.HunksOmitted, a.HunksOmitted, d)
			}
			if !tc.fast {
				return
			}
			// The same call with target "f", which the fast path
			// declines (it takes only the files a diff names): the
			// engine's apply inside apply_patch.
			args["target"] = "f"
			raw, err = json.Marshal(args)
			if err != nil {
				t.Fatal(err)
			}
			testtree.Write(t, dir, map[string]string{"f": tc.before})
			tans, targetAlloc := allocated(func() Answer { return s.applyPatch(context.Background(), raw) })
			if ta, _ := tans.Structured.(ApplyAnswer); tans.Failed || jsonOf(t, ta.Report) != jsonOf(t, a.Report) {
				t.Fatalf("with target f: %.300s", tans.Text)
			}
			t.Logf("apply_patch allocated %d bytes, %d with target f; the engine's apply alone %d", alloc, targetAlloc, engineAlloc)
			if targetAlloc-min(alloc, targetAlloc) < engineAlloc/2 {
				t.Errorf("apply_patch allocated %d bytes, %d on the engine (target f), whose apply alone allocates %d: not the fast path", alloc, targetAlloc, engineAlloc)
			}
		})
	}
}

// allocated runs f and returns its result and the bytes allocated
// meanwhile (by every goroutine: the tests of this package run one at a
// time).
func allocated[T any](f func() T) (T, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.ReadMemStats(&after)
	return v, after.TotalAlloc - before.TotalAlloc
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
