package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestApplyManyHunksFastPath: `patchbench apply FILE` of a large git diff
// (2,000 hunks, the size at which the fast path streams it) does what the
// engine does with the same text in process, byte for byte and report for
// report: the first apply, the second (already applied, left to the
// engine), --check, --reverse, --strict and standard input alike; the file
// keeps its mode and nothing is left beside it.
func TestApplyManyHunksFastPath(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin, err := exec.LookPath("patchbench") // the test binary, set up by TestMain
	if err != nil {
		t.Skip("patchbench is not in PATH")
	}
	old, neu, diff := testdata.ManyHunks(2000)
	pf := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(pf, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	// engine applies the text in process as the command did before it
	// streamed: the oracle.
	engine := func(dir string, o repair.ApplyOptions) (string, int) {
		root, err := patch.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		o.Name = pf
		if o.Strip == 0 {
			o.Strip = 1
		}
		rep, err := repair.Apply(root, diff, o)
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return string(b), 1
		}
		return string(b), 0
	}
	run := func(dir string, stdin bool, args ...string) (string, int) {
		name := pf
		if stdin {
			name = "-"
		}
		cmd := exec.Command(bin, append(append([]string{"apply", "--json", "-C", dir}, args...), name)...)
		if stdin {
			cmd.Stdin = strings.NewReader(diff)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("apply %v: not JSON: %v\n%s", args, err, out.String())
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b), code
	}
	tests := []struct {
		name   string
		before string // the file before
		args   []string
		stdin  bool
		after  string
	}{
		{"apply", old, nil, false, neu},
		{"apply --strict", old, []string{"--strict"}, false, neu},
		{"apply from standard input", old, nil, true, neu},
		{"apply again", neu, nil, false, neu},
		{"apply --strict again", neu, []string{"--strict"}, false, neu},
		{"apply --check", old, []string{"--check"}, false, old},
		{"apply --reverse", neu, []string{"--reverse"}, false, old},
		{"apply --reverse --strict", neu, []string{"--reverse", "--strict"}, false, old},
		{"apply --reverse of the old file", old, []string{"--reverse"}, false, old},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, ref := t.TempDir(), t.TempDir()
			for _, d := range []string{dir, ref} {
				if err := os.WriteFile(filepath.Join(d, "f"), []byte(tc.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, code := run(dir, tc.stdin, tc.args...)
			o := repair.ApplyOptions{}
			for _, a := range tc.args {
				switch a {
				case "--strict":
					o.Strict = true
				case "--check":
					o.Check = true
				case "--reverse":
					o.Reverse = true
				}
			}
			want, wantCode := engine(ref, o)
			if tc.stdin {
				want = strings.ReplaceAll(want, pf, "-")
			}
			var wv any
			_ = json.Unmarshal([]byte(want), &wv)
			wb, _ := json.MarshalIndent(wv, "", "  ")
			if d := cmp.Diff(string(wb), got); d != "" || code != wantCode {
				t.Errorf("exit %d, engine %d; report (-engine +command):\n%s", code, wantCode, d)
			}
			files := readTree(t, dir)
			if d := cmp.Diff(map[string]string{"f": tc.after}, files); d != "" {
				t.Errorf("files after (-want +got): %.2000s", d)
			}
			if fi, err := os.Stat(filepath.Join(dir, "f")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("mode after: %v %v, want 0600", fi.Mode(), err)
			}
		})
	}
}

// TestApplyManyHunksKilled: an apply by the fast path, killed with
// SIGKILL once its streamed temporary file is written ("temps") or
// swapped in ("step 1"), is undone by apply --recover and completed by
// applying again, as any write is, and leaves nothing beside the file.
func TestApplyManyHunksKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	pb, err := exec.LookPath("patchbench") // the test binary, set up by TestMain
	if err != nil {
		t.Skip("patchbench is not in PATH")
	}
	old, neu, diff := testdata.ManyHunks(2000)
	pf := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(pf, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, point := range []string{"temps", "step 1"} {
		for _, how := range []string{"--recover", "apply again"} {
			t.Run(point+"/"+how, func(t *testing.T) {
				dir := t.TempDir()
				writeTree(t, dir, map[string]string{"f": old})
				killApply(t, pb, dir, pf, point)
				args, want := []string{"apply", "--recover", "-C", dir}, old
				if how == "apply again" {
					args, want = []string{"apply", "-C", dir, pf}, neu
				}
				if out, err := exec.Command(pb, args...).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", how, err, out)
				}
				if got := readTree(t, dir); len(got) != 1 || got["f"] != want {
					names := []string{}
					for n := range got {
						names = append(names, n)
					}
					t.Errorf("after %s: files %v, f is the wanted one: %v", how, names, got["f"] == want)
				}
			})
		}
	}
}
