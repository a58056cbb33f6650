package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var argsSchema = json.RawMessage(`{"type":"object","properties":{"patch":{"type":"string"},"dry_run":{"type":"boolean"},"opts":{"type":"object"}}}`)

func TestCheckArgs(t *testing.T) {
	for _, c := range []struct {
		args, want string // want "" for accepted
	}{
		{`{"patch":"x","dry_run":true}`, ""},
		{``, ""},
		{`null`, ""},
		{`{}`, ""},
		{`{"opts":{"a":[1,{"b":2},{"b":3}],"c":{}}}`, ""}, // the same key in two objects of an array
		{`{"patch":"x","dry_run":true,"DRY_RUN":false}`, `unknown argument "DRY_RUN"`},
		{`{"Patch":"x"}`, `unknown argument "Patch"`},
		{`{"patch":"x","patch":"y"}`, `key "patch" given twice`},
		{`{"dry_run":true,"patch":"x","dry_run":false}`, `key "dry_run" given twice`},
		{`{"opts":{"a":1,"a":2}}`, `key "a" given twice`},
		{`{"opts":{"l":[{"a":1,"a":2}]}}`, `key "a" given twice`},
		{`{"other":1}`, `unknown argument "other" (argument names are exact, in lower case: dry_run, opts, patch)`},
		{`["patch"]`, "want a JSON object"},
		{`"patch"`, "want a JSON object"},
		{`{"patch":`, "bad arguments"},
		{`{"patch":"x"} {"DRY_RUN":true}`, "want a JSON object"},
		{`{"` + strings.Repeat("k", 5000) + `":1}`, "[... "},
	} {
		err := CheckArgs(json.RawMessage(c.args), argsSchema)
		if c.want == "" {
			if err != nil {
				t.Errorf("%.80s: %v", c.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: error %v, want %q", c.args, err, c.want)
		}
		if err != nil && len(err.Error()) > 1000 {
			t.Errorf("%.80s: a %d-byte error", c.args, len(err.Error()))
		}
	}
}

// FuzzCheckArgs: what CheckArgs lets through is a JSON object whose keys
// are declared names, each once.
func FuzzCheckArgs(f *testing.F) {
	f.Add(`{"patch":"x","dry_run":true}`)
	f.Add(`{"patch":"x","PATCH":"y"}`)
	f.Add(`{"opts":{"a":[{"a":1}]},"patch":""}`)
	f.Fuzz(func(t *testing.T, raw string) {
		if CheckArgs(json.RawMessage(raw), argsSchema) != nil || strings.TrimSpace(raw) == "" || strings.TrimSpace(raw) == "null" {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", raw, err)
		}
		for k := range m {
			if k != "patch" && k != "dry_run" && k != "opts" {
				t.Fatalf("accepted %q with key %q", raw, k)
			}
		}
	})
}

func TestClip(t *testing.T) {
	for _, s := range []string{strings.Repeat("a", 80_000), strings.Repeat("é", 50_000), strings.Repeat("日本", 20_000) + "end"} {
		for _, n := range []int{200, 1000, 8000} {
			c := Clip(s, n)
			if len(c) > n || !utf8.ValidString(c) || !strings.Contains(c, "bytes left out") {
				t.Errorf("Clip(%d bytes, %d): %d bytes, valid %v: %.120q", len(s), n, len(c), utf8.ValidString(c), c)
			}
			if !strings.HasPrefix(s, c[:20]) || !strings.HasSuffix(s, c[len(c)-20:]) {
				t.Errorf("Clip(%d bytes, %d) lost the start or the end: %.120q", len(s), n, c)
			}
		}
	}
	if Clip("short", 100) != "short" {
		t.Error("a short string was changed")
	}
}

// TestApplyPatchDeadline: an apply_patch call past its deadline writes
// nothing, whether it waited for the lock or got it, and leaves the lock
// free.
func TestApplyPatchDeadline(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("one\ntwo\n"), 0o644)
	s := &engineTools{dir: dir, writeLock: make(chan struct{}, 1)}
	edit := json.RawMessage(`{"patch":"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"}`)

	// Another call holds the lock: this one gives up at its deadline.
	s.writeLock <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	ans := s.applyPatch(ctx, edit)
	cancel()
	if !ans.Failed || !strings.Contains(ans.Text, "waited for an earlier apply_patch") {
		t.Errorf("waiting for the lock: %+v", ans)
	}
	<-s.writeLock

	// A deadline already passed: whichever way the call goes (it may get
	// the lock and compute), it writes nothing.
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if ans := s.applyPatch(ctx, edit); !ans.Failed {
			t.Fatalf("a call past its deadline: %+v", ans)
		}
		if b, _ := os.ReadFile(file); string(b) != "one\ntwo\n" {
			t.Fatalf("a call past its deadline wrote a.txt: %q", b)
		}
	}
	// The lock is free (the abandoned calls gave it back) and a call in
	// time writes.
	ans = s.applyPatch(context.Background(), edit)
	if b, _ := os.ReadFile(file); ans.Failed || string(b) != "one\nthree\n" {
		t.Errorf("apply in time: %+v, a.txt %q", ans, b)
	}
}

// TestApplyPatchReportBounded: a patch of 1,000 hunks gets an answer of
// at most maxReportHunks hunk reports, the refused one among them.
func TestApplyPatchReportBounded(t *testing.T) {
	dir := t.TempDir()
	var file, pt strings.Builder
	pt.WriteString("--- a/big.txt\n+++ b/big.txt\n")
	for i := range 1000 {
		fmt.Fprintf(&file, "line %d\nkeep\nkeep\nkeep\n", i)
		old := fmt.Sprintf("line %d", i)
		if i == 999 {
			old = "not in the file"
		}
		fmt.Fprintf(&pt, "@@ -%d,2 +%d,2 @@\n-%s\n+LINE %d\n keep\n", 4*i+1, 4*i+1, old, i)
	}
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(file.String()), 0o644)
	s := &engineTools{dir: dir, writeLock: make(chan struct{}, 1)}
	ans := s.applyPatch(context.Background(), json.RawMessage(`{"patch":`+strconv.Quote(pt.String())+`}`))
	a, ok := ans.Structured.(ApplyAnswer)
	if !ok || !ans.Failed {
		t.Fatalf("answer %.300s", ans.Text)
	}
	var hunks []int
	refused := false
	for _, f := range a.Files {
		for _, h := range f.Hunks {
			hunks = append(hunks, h.Hunk)
			refused = refused || h.Hunk == 1000 && h.Status == "refused"
		}
	}
	if len(hunks) != maxReportHunks || a.HunksOmitted != 1000-maxReportHunks || !refused || len(ans.Text) > MaxToolOutputBytes {
		t.Errorf("%d hunk reports, %d omitted, refused hunk kept %v, %d bytes", len(hunks), a.HunksOmitted, refused, len(ans.Text))
	}
}

// TestBoundedLongLine: an answer over MaxToolOutputBytes made of one long
// line (one that quotes a long input) keeps its start and end; cut at its
// last line end, it kept nothing.
func TestBoundedLongLine(t *testing.T) {
	for _, text := range []string{
		"no match for \"" + strings.Repeat("x", 300_000) + "\"",
		"header\n" + strings.Repeat("y", 300_000) + "\n",
		strings.Repeat("line of text\n", 30_000),
	} {
		got := TextAnswer(text, false).Text
		if len(got) > MaxToolOutputBytes {
			t.Errorf("%d bytes kept, over the bound of %d", len(got), MaxToolOutputBytes)
		}
		if len(got) < MaxToolOutputBytes/2 || !strings.HasPrefix(got, text[:10]) {
			t.Errorf("%d of %d bytes kept: %.100q", len(got), len(text), got)
		}
	}
}

// TestApplyPatchTwice: apply_patch called again with the same patch (an
// agent's retry) changes nothing and answers already_applied, never
// applied (issue 33): a blank line added by a -U3 hunk was added again at
// every call, and git's diff of a test added before a file's last "}"
// applied again at the next "}".
func TestApplyPatchTwice(t *testing.T) {
	tests := []struct{ name, file, want, patch string }{
		{"blank line", "def f():\n    a = 1\n    b = 2\n    c = 3\n\ndef g():\n    return 1\n",
			"def f():\n    a = 1\n    b = 2\n\n    c = 3\n\ndef g():\n    return 1\n",
			"--- a/a.py\n+++ b/a.py\n@@ -1,6 +1,7 @@\n def f():\n     a = 1\n     b = 2\n+\n     c = 3\n \n def g():\n"},
		{"before the last brace", "mod t {\n    fn a() {\n    }\n}\n", "mod t {\n    fn a() {\n    }\n\n    fn b() {\n    }\n}\n",
			"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -3,2 +3,5 @@\n     }\n+\n+    fn b() {\n+    }\n }\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "a.py")
			os.WriteFile(file, []byte(tc.file), 0o644)
			s := &engineTools{dir: dir, writeLock: make(chan struct{}, 1)}
			edit := json.RawMessage(`{"patch":` + strconv.Quote(tc.patch) + `}`)
			for i, want := range []string{"applied", "already_applied"} {
				ans := s.applyPatch(context.Background(), edit)
				a, _ := ans.Structured.(ApplyAnswer)
				b, _ := os.ReadFile(file)
				if ans.Failed || a.Status != want || a.Written != (i == 0) || string(b) != tc.want {
					t.Errorf("call %d: status %q, written %v, failed %v, a.py %q; want %s", i+1, a.Status, a.Written, ans.Failed, b, want)
				}
			}
		})
	}
}

// TestApplyPatchTwiceTwin: apply_patch called again where the first call
// changed one of two copies of a block (the other indented by tabs): the
// second call writes nothing and never answers applied (it changed the
// twin before: the whitespace tier found it).
func TestApplyPatchTwiceTwin(t *testing.T) {
	file := "def load(path):\n    data = read(path)\n    check(data)\n    return data\n\ndef other():\n\tdata = read(path)\n\tcheck(data)\n\treturn data\n"
	want := strings.Replace(file, "    check(data)\n", "    check(data, strict=True)\n", 1)
	patch := "--- a/a.py\n+++ b/a.py\n@@ @@\n     data = read(path)\n-    check(data)\n+    check(data, strict=True)\n     return data\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "a.py")
	os.WriteFile(path, []byte(file), 0o644)
	s := &engineTools{dir: dir, writeLock: make(chan struct{}, 1)}
	edit := json.RawMessage(`{"patch":` + strconv.Quote(patch) + `}`)
	for i := range 2 {
		ans := s.applyPatch(context.Background(), edit)
		a, _ := ans.Structured.(ApplyAnswer)
		b, _ := os.ReadFile(path)
		if string(b) != want {
			t.Fatalf("call %d: a.py %q, want %q", i+1, b, want)
		}
		if i == 0 && (ans.Failed || a.Status != "applied" || !a.Written) {
			t.Errorf("call 1: status %q, written %v, failed %v", a.Status, a.Written, ans.Failed)
		}
		if i == 1 && (a.Status == "applied" || a.Written) {
			t.Errorf("call 2: status %q, written %v: the change was made already", a.Status, a.Written)
		}
	}
}
