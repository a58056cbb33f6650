package repair_test

// Red team of apply once: a patch that applied, applied again to its own
// result, must change no byte, whatever the first apply had to repair or
// decide. The held-out, fidelity, malformed and formats corpora apply
// every recovered case a second time (secondApplyChanges); the families
// here put the result of a decided first apply (a twin of the hunk's old
// side left in the file, a hunk written twice) in front of the patch again.

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// twiceKnown are recovered cases whose second apply still changes the
// file (known limits, docs/repair.md): none now.
var twiceKnown = map[string]bool{}

// reverseKnown are recovered cases whose reverse, on the old file, still
// changes it: none now.
var reverseKnown = map[string]bool{}

// secondApplyChanges applies c's patch to its expected content, as
// patchbench apply does (no target) and as applybench does (the file as
// target), and reports whether either way changes the file.
func secondApplyChanges(c applybench.Case) bool {
	if c.Expected == nil {
		return false
	}
	for _, target := range []string{"", c.Path} {
		res, err := repair.Repair(c.Patch, repair.Options{Target: target, FS: patch.MapFS{c.Path: *c.Expected}})
		if err != nil {
			continue
		}
		for _, r := range res.Results {
			if r.Path != c.Path || string(r.Content) != *c.Expected {
				return true
			}
		}
	}
	return false
}

// twiceFamilies makes the second-apply families from one commit's file,
// each with the file a first apply made (expected: that file, unchanged),
// and the must-refuse new_elsewhere_bare:
//
//   - twin_twice_ws: ws_twin_exact's result (the hunk applied, the twin of
//     its old side with its indentation written the other way still in
//     the file), the patch with bare headers. Before: 76 of 80 second
//     applies changed the twin (the whitespace tier found it).
//   - twin_twice_numbered: numbers_twin_exact's result (an exact twin), the
//     patch without context spaces, with its line numbers.
//   - dup_hunk_twice: dup_hunk's result, the hunk written twice.
//   - new_elsewhere_bare (null): the old file with the hunk's new side
//     appended, the hunk alone with a bare header: its old side fits at
//     one place and its new side is at another, and nothing says whether
//     it is applied already (git apply and GNU patch apply it).
func twiceFamilies(f fileDiff, add addFunc) {
	hs := f.hunks
	if tk := twinHunk(hs); tk >= 0 {
		old := oldSide(hs[tk])
		tail := func(twin []string) string { return f.new + "\n" + strings.Join(twin, "\n") + "\n" }
		if other, changed := otherIndents(old); changed {
			newW := tail(other)
			add(f, "twin_twice_ws", newW, f.head+bareHeaders(hs), &newW, tk)
		}
		newD := tail(old)
		add(f, "twin_twice_numbered", newD, f.head+noSpace(hs), &newD, tk)
	}
	if len(hs) >= 2 {
		k := len(hs) / 2
		newCode := f.new
		add(f, "dup_hunk_twice", newCode, f.head+noSpace(append(append(append([][]string(nil), hs[:k+1]...), hs[k]), hs[k+1:]...)), &newCode, k)
	}
	for k, h := range hs {
		if !hasRemoved(h) || !addsSignificant(h) {
			continue
		}
		fileN := f.old + "\n" + strings.Join(newSide(h), "\n") + "\n"
		add(f, "new_elsewhere_bare", fileN, f.head+"@@ @@\n"+strings.Join(h[1:], "\n")+"\n", nil, k)
		break
	}
}

// TestAppliedTwiceShapes: the shapes the red team found, each a first
// apply (the file it must make, or "" where it must be refused) and a
// second apply to that result, which must change nothing.
func TestAppliedTwiceShapes(t *testing.T) {
	// A test added after a test like it: after the first apply the
	// hunk's old side (the end of one test, a blank line, the start of
	// the next) is in the file again, inside the lines it added.
	js := lines(
		"describe('app', function(){",
		"  it('should render', function(done){",
		"    var app = express();",
		"    app.render('user', function(err, str){",
		"      done();",
		"    })",
		"  })",
		"",
		"  it('should expose locals', function(done){",
		"    var app = express();",
		"  })",
		"})",
	)
	jsNew := strings.Replace(js, "  })\n\n  it('should expose", "  })\n\n  it('should render absolute', function(done){\n    var app = express();\n    app.render('/abs/user', function(err, str){\n      done();\n    })\n  })\n\n  it('should expose", 1)
	// git's diff of it, its line numbers 40 lines off (a model's): git
	// apply finds the old side at an offset, and the second time finds it
	// again inside the added test.
	jsPatch := "--- a/app.js\n+++ b/app.js\n@@ -46,6 +46,13 @@\n       done();\n     })\n   })\n+\n+  it('should render absolute', function(done){\n+    var app = express();\n+    app.render('/abs/user', function(err, str){\n+      done();\n+    })\n+  })\n \n   it('should expose locals', function(done){\n     var app = express();\n"

	// A block with a twin whose indentation is tabs, not spaces: the
	// exact tier places the first apply, the whitespace tier found the
	// twin the second time.
	py := lines(
		"def load(path):",
		"    data = read(path)",
		"    check(data)",
		"    return data",
		"",
		"def other():",
		"\tdata = read(path)",
		"\tcheck(data)",
		"\treturn data",
	)
	pyNew := strings.Replace(py, "    check(data)\n", "    check(data, strict=True)\n", 1)
	pyPatch := "--- a/m.py\n+++ b/m.py\n@@ @@\n     data = read(path)\n-    check(data)\n+    check(data, strict=True)\n     return data\n"

	// The old side at one place, the new side at another.
	goSrc := lines(
		"func a() error {",
		"\tx := load()",
		"\treturn nil",
		"}",
		"",
		"func b() error {",
		"\tx := load()",
		"\treturn x.Err()",
		"}",
	)
	goNew := strings.Replace(goSrc, "\tx := load()\n\treturn nil\n", "\tx := load()\n\treturn x.Err()\n", 1)
	goBare := "--- a/g.go\n+++ b/g.go\n@@ @@\n \tx := load()\n-\treturn nil\n+\treturn x.Err()\n }\n"
	goNumbered := "--- a/g.go\n+++ b/g.go\n@@ -2,3 +2,3 @@ func a() error {\n \tx := load()\n-\treturn nil\n+\treturn x.Err()\n }\n"

	// cobra@32e87e3c8e4e's bash_completions.go: one of two blank lines
	// before __debug() removed; the blank line left and __debug() are
	// the search text again, which a second apply removed too.
	sh := lines("fmt.Fprintf(out, `#!/bin/bash", "", "", "__debug()", "{")
	srBlank := "sh.go\n<<<<<<< SEARCH\n\n__debug()\n=======\n__debug()\n>>>>>>> REPLACE\n"
	v4aBlank := "*** Begin Patch\n*** Update File: sh.go\n@@\n-\n __debug()\n*** End Patch\n"
	udhBlank := "--- a/sh.go\n+++ b/sh.go\n@@ ... @@\n-\n __debug()\n"

	// requests@662c3edacc76's hooks.py, the hunk that removes one of two
	// blank lines after HOOKS with the context line next to it lost
	// (deletion_ctx_lost): placed without it, the result is the hunk's
	// old side exactly, which a second apply removed again.
	hooks := lines("import traceback", "", "", "HOOKS = ('args', 'response')", "", "", "def dispatch_hook(key, hooks, hook_data):", "    \"\"\"Dispatches a hook.\"\"\"", "", "    hooks = hooks or dict()")
	hooksPatch := "--- a/hooks.py\n+++ b/hooks.py\n@@ -2,7 +2,6 @@ import traceback\n \n HOOKS = ('args', 'response')\n-\n def dispatch_hook(key, hooks, hook_data):\n     \"\"\"Dispatches a hook.\"\"\"\n \n"

	// click@c3535905c77a's test_shell_completion.py held twice (fidelity's
	// repeated_numbered): a hunk without trailing context that removes the
	// first copy's last lines fits at its line number and, as git reads
	// it, at the end of the file; the second apply removed the second
	// copy's. Both readings stand: refused.
	one := lines("def test_files_closed(runner):", "    assert not warnings", "", "", "def test_fish(runner):", "    assert result.exit_code == 0")
	twice := one + one
	twicePatch := "--- a/t.py\n+++ b/t.py\n@@ -1,6 +1,2 @@\n def test_files_closed(runner):\n     assert not warnings\n-\n-\n-def test_fish(runner):\n-    assert result.exit_code == 0\n"

	tests := []struct {
		name, path, old, patch, want string
	}{
		{"last lines of the first of two copies removed", "t.py", twice, twicePatch, ""},
		{"one of two blank lines removed, its context line lost", "hooks.py", hooks, hooksPatch, ""},
		{"one of two blank lines removed, search-replace", "sh.go", sh, srBlank, ""},
		{"one of two blank lines removed, v4a", "sh.go", sh, v4aBlank, ""},
		{"one of two blank lines removed, udiff-h", "sh.go", sh, udhBlank, ""},
		{"test added after a test like it, wrong line numbers", "app.js", js, jsPatch, jsNew},
		{"twin with tabs, bare header", "m.py", py, pyPatch, pyNew},
		// git apply and GNU patch apply it; the file holds both readings.
		{"new side elsewhere, bare header", "g.go", goSrc, goBare, ""},
		// Its line number names the old side: applied there.
		{"new side elsewhere, numbered", "g.go", goSrc, goNumbered, goNew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := applybench.Case{Path: tc.path, OldCode: tc.old, Patch: tc.patch}
			got, _, err := repairOne(t, tc.path, tc.old, tc.patch)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("first apply made\n%s\nwant a refusal", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("first apply: %v\n%s\nwant\n%s", err, got, tc.want)
			}
			c.Expected = &tc.want
			if secondApplyChanges(c) {
				t.Errorf("the second apply changed the file")
			}
		})
	}
}

// checkTwice applies every recovered case a second time (to its expected
// content) and fails where that changes the file, but for twiceKnown; and
// applies it in reverse to its old content, where the first apply made
// every hunk, and fails where that changes the file.
func checkTwice(t *testing.T, cases []applybench.Case, recovered map[string]bool) {
	t.Helper()
	n, changed, known, reversed := 0, 0, 0, 0
	for _, c := range cases {
		if c.Expected == nil || !recovered[c.ID] {
			continue
		}
		n++
		if reverseUnappliedChanges(c) && !reverseKnown[c.ID] {
			reversed++
			t.Errorf("%s: reversed where it was not applied, the file changed", c.ID)
		}
		if !secondApplyChanges(c) {
			continue
		}
		if twiceKnown[c.ID] {
			known++
			continue
		}
		changed++
		t.Errorf("%s: applied a second time, the file changed", c.ID)
	}
	t.Logf("second apply of the %d recovered cases: %d changed the file (%d of them known limits, twiceKnown); reversed on the old file, %d changed it (but for reverseKnown)", n, changed+known, known, reversed)
}

// reverseUnappliedChanges applies c's patch in reverse to its own old
// content, where the first apply made every hunk (none was in the file
// yet): nothing is there to undo, so the reverse must change nothing. It
// reports whether the reverse changed the file either way (no target, or
// the file as target); false where the first apply did not make every
// hunk.
func reverseUnappliedChanges(c applybench.Case) bool {
	res, err := repair.Repair(c.Patch, repair.Options{Target: c.Path, FS: patch.MapFS{c.Path: c.OldCode}})
	if err != nil || len(res.Files) == 0 {
		return false
	}
	for _, fr := range res.Files {
		for _, h := range fr.Hunks {
			if h.Status != repair.StatusApplied {
				return false
			}
		}
	}
	for _, target := range []string{"", c.Path} {
		res, err := repair.Repair(c.Patch, repair.Options{Target: target, Reverse: true, FS: patch.MapFS{c.Path: c.OldCode}})
		if err != nil {
			continue
		}
		for _, r := range res.Results {
			if r.Path != c.Path || string(r.Content) != c.OldCode {
				return true
			}
		}
	}
	return false
}

// TestReverseUnappliedShapes: --reverse of a patch that is not applied
// finds nothing to undo: it changes nothing (already applied, or
// refused). A deletion whose context line next to the removed lines was
// lost (fidelity's deletion_ctx_lost, cobra@a4ab3fa09e3d): reversed, it
// is an insertion placed loosely, and it inserted the lines again next
// to themselves (48 of the 140 held-out and fidelity cases before).
func TestReverseUnappliedShapes(t *testing.T) {
	old := lines(
		"// PowerShell completions are based on clap:",
		"// https://github.com/clap-rs/clap",
		"//",
		"// Copyright 2020 the cobra authors.",
		"// can be downloaded separately for windows 7 or 8.1).",
		"",
		"package cobra",
	)
	// The hunk lost "// Copyright ...", the context line after the block.
	text := "--- a/ps.go\n+++ b/ps.go\n@@ -1,6 +1,3 @@\n-// PowerShell completions are based on clap:\n-// https://github.com/clap-rs/clap\n-//\n // can be downloaded separately for windows 7 or 8.1).\n \n"
	want := strings.Replace(old, "// PowerShell completions are based on clap:\n// https://github.com/clap-rs/clap\n//\n", "", 1)
	got, _, err := repairOne(t, "ps.go", old, text)
	if err != nil || got != want {
		t.Fatalf("forward: %v\n%s", err, got)
	}
	res, err := repair.Repair(text, repair.Options{Reverse: true, FS: patch.MapFS{"ps.go": old}})
	if err == nil && len(res.Results) > 0 && string(res.Results[0].Content) != old {
		t.Errorf("--reverse on the file it was not applied to made\n%s", res.Results[0].Content)
	}
	c := applybench.Case{Path: "ps.go", OldCode: old, Patch: text, Expected: &want}
	if reverseUnappliedChanges(c) {
		t.Errorf("reverseUnappliedChanges: the file changed")
	}

	// malformed-dev's trailing_ws (requests@bea206018211 models.py): the
	// hunk only stripped trailing whitespace, which the damage took from
	// both sides; reversed on the old file it stripped it again.
	ws := lines("class Response:", "    def json(self):  ", "        return loads(self.text)")
	wsText := "--- a/models.py\n+++ b/models.py\n@@ -1,3 +1,3 @@\n class Response:\n-    def json(self):\n+    def json(self):\n         return loads(self.text)\n"
	wsWant := strings.Replace(ws, "self):  \n", "self):\n", 1)
	cw := applybench.Case{Path: "models.py", OldCode: ws, Patch: wsText, Expected: &wsWant}
	if got, _, err := repairOne(t, "models.py", ws, wsText); err != nil || got != wsWant {
		t.Fatalf("trailing_ws forward: %v\n%s", err, got)
	}
	if reverseUnappliedChanges(cw) {
		t.Errorf("trailing_ws: --reverse on the old file changed it")
	}
}
