package repair_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// repairOne repairs edit against one file and returns the new content, the
// hunk reports and the error.
func repairOne(t *testing.T, name, content, edit string) (string, []repair.HunkReport, error) {
	t.Helper()
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{name: content}})
	var hunks []repair.HunkReport
	if len(res.Files) > 0 {
		hunks = res.Files[0].Hunks
	}
	if err != nil || len(res.Results) == 0 {
		return "", hunks, err
	}
	return string(res.Results[0].Content), hunks, nil
}

// refuses checks that edit is refused for file with a reason containing
// why.
func refuses(t *testing.T, name, content, edit, why string) {
	t.Helper()
	if _, _, err := repairOne(t, name, content, edit); !errors.Is(err, repair.ErrRefused) || !strings.Contains(err.Error(), why) {
		t.Fatalf("err = %v, want a refusal containing %q", err, why)
	}
}

// applies checks that edit gives want at the given tier, and returns the
// hunk reports.
func applies(t *testing.T, name, content, edit, want, tier string) []repair.HunkReport {
	t.Helper()
	got, hunks, err := repairOne(t, name, content, edit)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if hunks[0].Tier != tier {
		t.Errorf("tier %s, want %s", hunks[0].Tier, tier)
	}
	return hunks
}

// The real case: an elif/else chain inside `if r is not None:`, the hunk
// written 4 spaces shallower than the file (12 against 16). Placed at the
// indentation tier, its added lines move 4 columns deeper with the rest;
// written at the hunk's 12 columns, the elif belonged to `if r is not None:`.
func TestIndentationShiftMovesAddedLines(t *testing.T) {
	file := `class Domain(Option):
    @classmethod
    def preprocess(cls, domain):
        if isinstance(domain, str):
            r = cls._re_fraction.match(domain)
            if r is not None:
                ground = r.groups()[0]
                if ground in ['Z', 'ZZ']:
                    return sympy.polys.domains.ZZ.frac_field(*gens)
                else:
                    return sympy.polys.domains.QQ.frac_field(*gens)
        raise OptionError('expected a valid domain specification, got %s' % domain)
`
	edit := `--- a/sympy/polys/polyoptions.py
+++ b/sympy/polys/polyoptions.py
@@ -7,5 +7,7 @@
             ground = r.groups()[0]
             if ground in ['Z', 'ZZ']:
                 return sympy.polys.domains.ZZ.frac_field(*gens)
+            elif ground in ['R', 'RR']:
+                return sympy.polys.domains.RR.frac_field(*gens)
             else:
                 return sympy.polys.domains.QQ.frac_field(*gens)
`
	want := strings.Replace(file, "                else:\n",
		"                elif ground in ['R', 'RR']:\n                    return sympy.polys.domains.RR.frac_field(*gens)\n                else:\n", 1)
	hunks := applies(t, "sympy/polys/polyoptions.py", file, edit, want, repair.TierIndentation)
	if !contains(hunks[0].Repairs, "reindent") {
		t.Errorf("repairs %v lack reindent", hunks[0].Repairs)
	}
}

// The same shift in a brace language whose file indents with tabs: the
// hunk wrote each level as 4 spaces and one level too shallow. Added lines
// come out one tab deeper, in tabs.
func TestIndentationShiftTabsGo(t *testing.T) {
	file := "package p\n\nfunc f(xs []int) int {\n\tn := 0\n\tfor _, x := range xs {\n\t\tif x > 0 {\n\t\t\tn += x\n\t\t}\n\t}\n\treturn n\n}\n"
	edit := "--- a/p.go\n+++ b/p.go\n@@ -5,4 +5,7 @@\n for _, x := range xs {\n     if x > 0 {\n         n += x\n+    } else if x < -10 {\n+        n -= x\n+        continue\n     }\n"
	want := strings.Replace(file, "\t\t\tn += x\n\t\t}\n", "\t\t\tn += x\n\t\t} else if x < -10 {\n\t\t\tn -= x\n\t\t\tcontinue\n\t\t}\n", 1)
	applies(t, "p.go", file, edit, want, repair.TierIndentation)
}

// A hunk whose lines match only with indentation changed by different
// amounts on different lines is refused, saying so: its added lines could
// go at either depth.
func TestIndentationInconsistentRefused(t *testing.T) {
	file := "def f(x):\n    if x:\n        y = compute(x)\n        return y\n    return None\n"
	edit := "--- a/f.py\n+++ b/f.py\n@@ @@\n     if x:\n     y = compute(x)\n+    log(y)\n         return y\n"
	refuses(t, "f.py", file, edit, "different amounts")
}

// The real case: a module-level def added after a method whose hunk
// context is followed by two blank lines; in the file the method is
// followed by one blank line and the next method of the same class.
// Dropping the blank context line that does not match would put the new
// function inside the class, and the class's later methods inside it.
func TestFuzzyRefusesDedentedBlockInsideClass(t *testing.T) {
	file := `class Printer(Visitor):
    def visit_constant(self, node):
        return repr(node.value)

    def variable(self, node):
        return self.scope[node.name]

    def visit_call(self, node):
        return node.func(*node.args)
`
	edit := `--- a/printer.py
+++ b/printer.py
@@ -2,4 +2,8 @@ class Printer(Visitor):
     def visit_constant(self, node):
         return repr(node.value)
 
 
+def print_tree(node):
+    return Printer().visit(node)
+
+
`
	// Refused before the block rule is asked: the hunk ends with its added
	// lines, and its place is not the end of the file.
	refuses(t, "printer.py", file, edit, "uncertain: the hunk ends with added lines")
}

// The reverse: a method (indented) placed loosely after module-level code
// that opens no block is refused.
func TestFuzzyRefusesIndentedBlockAfterModuleCode(t *testing.T) {
	file := "class A:\n    def f(self):\n        return 1\n\n\nLIMIT = 10\nNAME = 'a'\n\n\ndef g():\n    return 2\n"
	edit := "--- a/a.py\n+++ b/a.py\n@@ @@\n LIMIT = 10\n NAME = 'a'\n EXTRA = 3\n+    def h(self):\n+        return 3\n \n \n def g():\n"
	refuses(t, "a.py", file, edit, "opens no block")
}

// Brace languages, where indentation is not syntax: edits placed loosely
// whose added lines sit in the block around them apply; a top-level
// function dropped into the middle of a function body does not.
func TestFuzzyBlockRuleBraceLanguages(t *testing.T) {
	goFile := "package p\n\nimport \"fmt\"\n\nfunc run(args []string) error {\n\tif len(args) == 0 {\n\t\treturn errUsage\n\t}\n\tname := args[0]\n\tfmt.Println(name)\n\treturn nil\n}\n"
	jsFile := "class Store {\n  constructor() {\n    this.items = [];\n  }\n\n  add(item) {\n    this.items.push(item);\n  }\n\n  size() {\n    return this.items.length;\n  }\n}\n"
	javaFile := "public class Counter {\n    private int n;\n\n    public void inc() {\n        n++;\n    }\n\n    public int get() {\n        return n;\n    }\n}\n"
	for _, tc := range []struct {
		name, path, file, edit, want, refusal string
	}{{
		// A file line the model left out of its context, statements added
		// inside the function body.
		name: "go statements", path: "p.go", file: goFile,
		edit: "--- a/p.go\n+++ b/p.go\n@@ @@\n \tif len(args) == 0 {\n \t}\n \tname := args[0]\n+\tif name == \"\" {\n+\t\treturn errUsage\n+\t}\n \tfmt.Println(name)\n \treturn nil\n }\n",
		want: strings.Replace(goFile, "\tfmt.Println", "\tif name == \"\" {\n\t\treturn errUsage\n\t}\n\tfmt.Println", 1),
	}, {
		name: "go top-level func inside a body", path: "p.go", file: goFile,
		edit:    "--- a/p.go\n+++ b/p.go\n@@ @@\n \tif len(args) == 0 {\n \t\treturn errUsage\n \t}\n \n+func helper() string {\n+\treturn \"x\"\n+}\n+\n \tname := args[0]\n",
		refusal: "would fall into their block",
	}, {
		name: "js method", path: "store.js", file: jsFile,
		edit: "--- a/store.js\n+++ b/store.js\n@@ @@\n   add(item) {\n   }\n \n+  clear() {\n+    this.items = [];\n+  }\n+\n   size() {\n     return this.items.length;\n   }\n",
		want: strings.Replace(jsFile, "  size() {", "  clear() {\n    this.items = [];\n  }\n\n  size() {", 1),
	}, {
		name: "java statement", path: "Counter.java", file: javaFile,
		edit: "--- a/Counter.java\n+++ b/Counter.java\n@@ @@\n     public void inc() {\n+        if (n == Integer.MAX_VALUE) return;\n         n++;\n     }\n \n     // getters\n     public int get() {\n",
		want: strings.Replace(javaFile, "        n++;", "        if (n == Integer.MAX_VALUE) return;\n        n++;", 1),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.refusal != "" {
				refuses(t, tc.path, tc.file, tc.edit, tc.refusal)
				return
			}
			// Fuzzy: the rule is meant to be exercised.
			applies(t, tc.path, tc.file, tc.edit, tc.want, repair.TierFuzzy)
		})
	}
}

// Python edits placed loosely whose added lines fit their block apply: a
// method added inside the class, a statement at the end of a body.
func TestFuzzyBlockRulePythonLegit(t *testing.T) {
	file := "class Printer(Visitor):\n    def visit_constant(self, node):\n        return repr(node.value)\n\n    def variable(self, node):\n        return self.scope[node.name]\n\n\ndef main():\n    print(Printer())\n"
	edit := "--- a/printer.py\n+++ b/printer.py\n@@ @@\n     def variable(self, node):\n         return self.scope[node.name]\n+\n+    def visit_list(self, node):\n+        return [self.visit(x) for x in node.items]\n \n \n # entry point\n def main():\n"
	want := strings.Replace(file, "node.name]\n", "node.name]\n\n    def visit_list(self, node):\n        return [self.visit(x) for x in node.items]\n", 1)
	applies(t, "printer.py", file, edit, want, repair.TierFuzzy)
}

const visitor = `class Printer(Visitor):
    def visit_constant(self, node):
        return repr(node.value)

    def visit_call(self, node):
        args = ", ".join(self.visit(a) for a in node.args)
        return f"{node.func}({args})"

    def variable(self, node):
        return node.name

    def visit_list(self, node):
        return "[" + ", ".join(self.visit(x) for x in node.items) + "]"
`

// The real cases: a trailing context line misremembered (`def
// visit_variable` where the file has `def variable`), and two trailing
// context lines invented, while the removed lines and the rest of the
// context match once. Placed, with the lines that did not match reported.
func TestEdgeContextMisremembered(t *testing.T) {
	want := strings.Replace(visitor, `        return f"{node.func}({args})"`, `        return f"{self.visit(node.func)}({args})"`, 1)
	for _, tc := range []struct {
		name, trail string
		unmatched   []string
	}{
		{"misremembered", "     def visit_variable(self, node):\n", []string{"    def visit_variable(self, node):"}},
		{"two invented", "     def visit_name(self, node):\n         return node.id\n", []string{"    def visit_name(self, node):", "        return node.id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edit := "--- a/printer.py\n+++ b/printer.py\n@@ -5,5 +5,5 @@\n     def visit_call(self, node):\n         args = \", \".join(self.visit(a) for a in node.args)\n-        return f\"{node.func}({args})\"\n+        return f\"{self.visit(node.func)}({args})\"\n \n" + tc.trail
			hunks := applies(t, "printer.py", visitor, edit, want, repair.TierFuzzy)
			h := hunks[0]
			if !contains(h.Repairs, "edge-context-dropped") || h.ContextDropped != len(tc.unmatched) {
				t.Errorf("repairs %v, context dropped %d; want edge-context-dropped and %d", h.Repairs, h.ContextDropped, len(tc.unmatched))
			}
			if strings.Join(h.Unmatched, "|") != strings.Join(tc.unmatched, "|") {
				t.Errorf("unmatched %q, want %q", h.Unmatched, tc.unmatched)
			}
		})
	}
}

// The same at the leading end.
func TestEdgeContextInventedLeading(t *testing.T) {
	want := strings.Replace(visitor, "        return node.name\n", "        return self.scope.get(node.name, node.name)\n", 1)
	edit := "--- a/printer.py\n+++ b/printer.py\n@@ @@\n     def visit_variable(self, node):\n-        return node.name\n+        return self.scope.get(node.name, node.name)\n \n     def visit_list(self, node):\n"
	hunks := applies(t, "printer.py", visitor, edit, want, repair.TierFuzzy)
	if got := hunks[0].Unmatched; len(got) != 1 || got[0] != "    def visit_variable(self, node):" {
		t.Errorf("unmatched %q", got)
	}
}

// A hunk that skips a file line and adds the same line back as its first
// added line: the model wrote the file's line back (keep it once), or adds
// a block that starts like the file's next one (keep both). Real commits
// show both (issue 29: a doc comment added before the file's own), so the
// hunk is refused, naming the line.
func TestSkippedLineAddedBackRefused(t *testing.T) {
	edit := "--- a/printer.py\n+++ b/printer.py\n@@ -8,4 +8,6 @@\n \n+    def variable(self, node):\n+        if node.name in self.scope:\n+            return self.scope[node.name]\n         return node.name\n \n     def visit_list(self, node):\n"
	refuses(t, "printer.py", visitor, edit, "uncertain")
}

// An edit already in the file is a success that changes nothing, in every
// format, reported with the line where its new lines are.
func TestAlreadyAppliedEveryFormat(t *testing.T) {
	after := strings.Replace(visitor, "        return node.name\n", "        return self.scope.get(node.name)\n", 1)
	lines := strings.Split(after, "\n")
	for _, f := range []patch.Format{patch.UDiff, patch.UDiffH, patch.UDiffL, patch.SearchReplace, patch.V4A} {
		opts := patch.DefaultMakeOptions()
		opts.Unique = !f.HasPositions()
		fp := patch.Make("printer.py", "printer.py", visitor, after, opts)
		text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		res, err := repair.Repair(text, repair.Options{Format: f, FS: patch.MapFS{"printer.py": after}})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if res.Status != repair.StatusAlreadyApplied || len(res.Results) != 0 {
			t.Errorf("%s: status %s, %d results; want already_applied and none", f, res.Status, len(res.Results))
		}
		// The place is where the hunk's new side starts: the changed line
		// (10) within its context.
		if h := res.Files[0].Hunks[0]; h.Status != repair.StatusAlreadyApplied || h.Line < 1 || h.Line > 10 ||
			!strings.Contains(strings.Join(lines[h.Line-1:min(len(lines), h.Line+6)], "\n"), "self.scope.get(node.name)") {
			t.Errorf("%s: hunk %+v", f, h)
		}
	}
}

// A hunk already applied next to one that is not: the other is applied,
// the file written, and each hunk says what happened to it.
func TestAlreadyAppliedMixed(t *testing.T) {
	after := strings.Replace(visitor, "        return node.name\n", "        return self.scope.get(node.name)\n", 1)
	edit := "--- a/printer.py\n+++ b/printer.py\n@@ -2,3 +2,3 @@\n     def visit_constant(self, node):\n-        return repr(node.value)\n+        return str(node.value)\n \n@@ -9,3 +9,3 @@\n     def variable(self, node):\n-        return node.name\n+        return self.scope.get(node.name)\n \n"
	res, err := repair.Repair(edit, repair.Options{FS: patch.MapFS{"printer.py": after}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != repair.StatusApplied || len(res.Results) != 1 {
		t.Fatalf("status %s, %d results", res.Status, len(res.Results))
	}
	if got, want := string(res.Results[0].Content), strings.Replace(after, "repr(node.value)", "str(node.value)", 1); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	hs := res.Files[0].Hunks
	if hs[0].Status != repair.StatusApplied || hs[1].Status != repair.StatusAlreadyApplied || hs[1].Line != 9 {
		t.Errorf("hunks %+v", hs)
	}
}

// Still refused: context invented throughout (the removed line is in the
// file, but nothing around it is), and an answer holding two competing
// diffs of the same file.
func TestStillRefused(t *testing.T) {
	t.Run("context invented throughout", func(t *testing.T) {
		edit := "--- a/printer.py\n+++ b/printer.py\n@@ @@\n     def visit_name(self, node):\n         scope = self.scope\n-        return node.name\n+        return scope[node.name]\n \n     def visit_tuple(self, node):\n"
		refuses(t, "printer.py", visitor, edit, "context not found")
	})
	t.Run("competing diffs", func(t *testing.T) {
		one := "--- a/printer.py\n+++ b/printer.py\n@@ -9,2 +9,2 @@\n     def variable(self, node):\n-        return node.name\n+        return self.scope[node.name]\n"
		two := strings.Replace(one, "self.scope[node.name]", "self.scope.get(node.name)", 1)
		answer := "Either this:\n\n```diff\n" + one + "```\n\nor, if a missing name should not fail:\n\n```diff\n" + two + "```\n"
		res, err := repair.Repair(answer, repair.Options{FS: patch.MapFS{"printer.py": visitor}})
		if !errors.Is(err, repair.ErrRefused) {
			t.Fatalf("err = %v (status %s), want a refusal", err, res.Status)
		}
	})
}

// Issue 29: a hunk adds a doc-commented method just before the file's own
// doc comment, and its context lost the file's "  /**". Reading the added
// "  /**" as that file line (the skipped-line repair) would leave one doc
// comment where there must be two; the added block may be a block of its
// own, so the hunk is applied as written or refused, never read that way.
func TestSkippedLineNotWhenAddedBlockRepeatsFile(t *testing.T) {
	file := "public class Counter {\n  private int n;\n\n  /**\n   * Returns the count.\n   */\n  public int get() {\n    return n;\n  }\n}\n"
	want := "public class Counter {\n  private int n;\n\n  /**\n   * Sets the count.\n   */\n  public void set(int v) {\n    n = v;\n  }\n\n  /**\n   * Returns the count.\n   */\n  public int get() {\n    return n;\n  }\n}\n"
	edit := "--- a/Counter.java\n+++ b/Counter.java\n@@ -2,7 +2,14 @@\n   private int n;\n \n+  /**\n+   * Sets the count.\n+   */\n+  public void set(int v) {\n+    n = v;\n+  }\n+\n    * Returns the count.\n    */\n   public int get() {\n     return n;\n"
	got, hunks, err := repairOne(t, "Counter.java", file, edit)
	if err == nil && got != want {
		t.Fatalf("misapplied (hunks %+v):\n%s", hunks, got)
	}
}

// Issue 29: the first context line has the wrong indentation and the last
// two are invented, while the removed line is exact and in the file once.
// Placed by trimming both ends; the file keeps its own lines there.
func TestEdgeContextBothEnds(t *testing.T) {
	want := strings.Replace(visitor, `        return f"{node.func}({args})"`, `        return f"{self.visit(node.func)}({args})"`, 1)
	edit := "--- a/printer.py\n+++ b/printer.py\n@@ -5,6 +5,6 @@\n   def visit_call(self, node):\n         args = \", \".join(self.visit(a) for a in node.args)\n-        return f\"{node.func}({args})\"\n+        return f\"{self.visit(node.func)}({args})\"\n \n     def visit_name(self, node):\n         return node.id\n"
	hunks := applies(t, "printer.py", visitor, edit, want, repair.TierFuzzy)
	if h := hunks[0]; !contains(h.Repairs, "edge-context-dropped") || h.ContextDropped != 3 {
		t.Errorf("repairs %v, context dropped %d; want edge-context-dropped and 3", h.Repairs, h.ContextDropped)
	}
	// The same with the removed line in the file twice: which one is meant
	// rests on the trimmed context alone, so it is refused.
	twice := visitor + "\n    def visit_apply(self, node, args):\n        return f\"{node.func}({args})\"\n"
	refuses(t, "printer.py", twice, edit, "context not found")
}
