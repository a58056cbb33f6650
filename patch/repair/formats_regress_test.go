package repair_test

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// Regression tests for the false applies the formats red team found
// (TestFormatsRedTeam), each from its real case, cut to the lines that
// matter.

// cobra@6067837866ab cobra.go: the commit adds `"io"` before `"os"`; the
// file has it already. The block's old side (`"os"`) still fits, inside
// its new side: applying it again would import io twice.
func TestNewSideAroundOldSideRefused(t *testing.T) {
	file := "import (\n\t\"bytes\"\n\t\"fmt\"\n\tflag \"github.com/spf13/pflag\"\n\t\"io\"\n\t\"os\"\n\t\"strings\"\n)\n"
	for _, edit := range []string{
		"cobra.go\n<<<<<<< SEARCH\n\t\"os\"\n=======\n\t\"io\"\n\t\"os\"\n>>>>>>> REPLACE\n",
		"--- a/cobra.go\n+++ b/cobra.go\n@@ ... @@\n+\t\"io\"\n \t\"os\"\n",
		"*** Begin Patch\n*** Update File: cobra.go\n@@\n+\t\"io\"\n \t\"os\"\n*** End Patch\n",
	} {
		refuses(t, "cobra.go", file, edit, "new side is in the file already")
	}
	// Where the file lacks it, the same edits apply.
	without := strings.Replace(file, "\t\"io\"\n", "", 1)
	for _, edit := range []string{
		"cobra.go\n<<<<<<< SEARCH\n\t\"os\"\n=======\n\t\"io\"\n\t\"os\"\n>>>>>>> REPLACE\n",
		"*** Begin Patch\n*** Update File: cobra.go\n@@\n+\t\"io\"\n \t\"os\"\n*** End Patch\n",
	} {
		got, _, err := repairOne(t, "cobra.go", without, edit)
		if err != nil || got != file {
			t.Errorf("%q: got %q, %v; want the import added", edit, got, err)
		}
	}
}

// cobra@57f473263ef4 doc/man_docs_test.go: a V4A chunk anchored on a line
// two tests share (`checkStringOmits(t, found, unexpected)`), whose
// context (` }`) follows both. codex takes the first; tolerant apply
// refuses, and strict mode still goes by codex's rule.
func TestV4AAnchorTwiceRefused(t *testing.T) {
	file := "func TestA(t *testing.T) {\n\tcheckStringOmits(t, found, unexpected)\n}\n\nfunc TestB(t *testing.T) {\n\tcheckStringOmits(t, found, unexpected)\n}\n"
	edit := "*** Begin Patch\n*** Update File: man_test.go\n@@ checkStringOmits(t, found, unexpected)\n }\n+\n+func TestGenManSeeAlso(t *testing.T) {\n+}\n*** End Patch\n"
	refuses(t, "man_test.go", file, edit, "ambiguous")
	p, err := patch.ParseV4A(edit)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := patch.ApplyFile(file, p.Files[0], patch.ApplyOptions{}); err != nil {
		t.Errorf("strict (codex) apply: %v", err)
	}
	// Context that fits twice, no anchor: the same.
	refuses(t, "man_test.go", file, "*** Begin Patch\n*** Update File: man_test.go\n@@\n \tcheckStringOmits(t, found, unexpected)\n+\tcheckStringOmits(t, found, extra)\n*** End Patch\n", "ambiguous")
}

// cobra@fb5077acbe25 commander.go: the blocks in reverse order, the first
// one searching for `\t}`, which is in the file before the second block's
// place and after it. Hunk order is no evidence from one placed hunk.
func TestOrderFromOneHunkRefused(t *testing.T) {
	file := "func (c *Commander) initHelp() {\n\tif c.helpCommand == nil {\n\t\tc.helpCommand = &Command{}\n\t}\n\tc.AddCommand(c.HelpCommand)\n}\n\nfunc (c *Commander) Execute() (err error) {\n\tc.initHelp()\n\tif len(c.args) == 0 {\n\t\terr = c.execute(os.Args[1:])\n\t}\n\treturn\n}\n"
	edit := "commander.go\n<<<<<<< SEARCH\n\t}\n=======\n\t}\n\n\tif err != nil {\n\t\tc.Println(\"Error:\", err.Error())\n\t}\n>>>>>>> REPLACE\n" +
		"commander.go\n<<<<<<< SEARCH\n\t\terr = c.execute(os.Args[1:])\n=======\n\t\tif len(os.Args) > 1 {\n\t\t\terr = c.execute(os.Args[1:])\n\t\t}\n>>>>>>> REPLACE\n"
	refuses(t, "commander.go", file, edit, "ambiguous")
}

// A block that searches for a line the block before it adds, which the
// file also has: Aider applies the second block to the first one's result.
func TestSearchReplaceChainRefused(t *testing.T) {
	file := "def a():\n    return load(path)\n\n\ndef b():\n    x = 1\n    return x\n"
	edit := "f.py\n<<<<<<< SEARCH\n    x = 1\n=======\n    x = 1\n    return load(path)\n>>>>>>> REPLACE\n" +
		"f.py\n<<<<<<< SEARCH\n    return load(path)\n=======\n    return load(path)  # checked\n>>>>>>> REPLACE\n"
	refuses(t, "f.py", file, edit, "block 1 writes")
}

// An empty SEARCH whose REPLACE is the file's whole new content: append
// (Aider) or replace? Refused; a real append still applies.
func TestEmptySearchRestatingRefused(t *testing.T) {
	file := "package p\n\nfunc A() int { return 1 }\n"
	refuses(t, "p.go", file, "p.go\n<<<<<<< SEARCH\n=======\npackage p\n\nfunc A() int { return 2 }\n>>>>>>> REPLACE\n", "append to the file, or replace it")
	got, _, err := repairOne(t, "p.go", file, "p.go\n<<<<<<< SEARCH\n=======\n\nfunc B() int { return 2 }\n>>>>>>> REPLACE\n")
	if want := file + "\nfunc B() int { return 2 }\n"; err != nil || got != want {
		t.Errorf("append: got %q, %v; want %q", got, err, want)
	}
}

// cobra@32e87e3c8e4e bash_completions.go: the commit removes one of two
// blank lines; the file has lost it already. The fuzzy tier read the
// block's second blank line as context the model invented and removed the
// file's only one.
func TestFuzzyTwinOfRemovedLineRefused(t *testing.T) {
	file := "}\n\nfunc preamble(out *bytes.Buffer) {\n\tfmt.Fprintf(out, `#!/bin/bash\n\n__debug()\n{\n    if [[ -n ${BASH_COMP_DEBUG_FILE} ]]; then\n"
	edit := "bash_completions.go\n<<<<<<< SEARCH\nfunc preamble(out *bytes.Buffer) {\n\tfmt.Fprintf(out, `#!/bin/bash\n\n\n__debug()\n{\n    if [[ -n ${BASH_COMP_DEBUG_FILE} ]]; then\n=======\nfunc preamble(out *bytes.Buffer) {\n\tfmt.Fprintf(out, `#!/bin/bash\n\n__debug()\n{\n    if [[ -n ${BASH_COMP_DEBUG_FILE} ]]; then\n>>>>>>> REPLACE\n"
	got, _, err := repairOne(t, "bash_completions.go", file, edit)
	if err == nil && got != file {
		t.Fatalf("applied, removing the file's only blank line:\n%s", got)
	}
}
