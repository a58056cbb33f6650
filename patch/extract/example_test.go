package extract_test

import (
	"fmt"

	"github.com/patchbench/patchbench/patch/extract"
)

func Example() {
	answer := "The sign is wrong. Here is the fix:\n" +
		"\n" +
		"```diff\n" +
		"--- a/calc.py\n" +
		"+++ b/calc.py\n" +
		"@@ -1,2 +1,2 @@\n" +
		" def add(a, b):\n" +
		"-    return a - b\n" +
		"+    return a + b\n" +
		"```\n" +
		"\n" +
		"The whole file is now:\n" +
		"\n" +
		"```python\n" +
		"def add(a, b):\n" +
		"    return a + b\n" +
		"```\n" +
		"</s>"

	res, err := extract.Extract(answer)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Text)
	fmt.Println(res.Format)
	fmt.Println(res.Source)
	for _, c := range res.Candidates {
		fmt.Printf("%s %s, lines %d-%d: %s\n", c.Kind, c.Lang, c.StartLine, c.EndLine, c.Reason)
	}

	_, err = extract.Extract("I could not find the bug.")
	fmt.Println(err)
	// Output:
	// --- a/calc.py
	// +++ b/calc.py
	// @@ -1,2 +1,2 @@
	//  def add(a, b):
	// -    return a - b
	// +    return a + b
	// udiff
	// ```diff fence (lines 3-10)
	// fence diff, lines 3-10: udiff edit, 1 hunk; chosen
	// fence python, lines 14-17: no edit markers: python code, not an edit; not chosen: the edit is at lines 3-10
	// extract: no edit found: 1 line of prose, without fences, tags or diff markers
}

func ExampleAnswer() {
	// A fence in prose: its content.
	fmt.Printf("%q\n", extract.Answer("Here is the file:\n\n```python\nprint('hi')\n```\n\nLet me know!"))
	// A fenced answer whose code holds a fence of its own: to the last
	// closing fence.
	fmt.Printf("%q\n", extract.Answer("```rust\n//! ```\n//! x\n/*!\n```\nlet x = 1;\n```\n*/\nfn main() {}\n```\n"))
	// Bare code with a reStructuredText underline: all of it.
	fmt.Printf("%q\n", extract.Answer("\"\"\"\nrequests.hooks\n~~~~~~~~~~~~~~\n\"\"\"\nHOOKS = []\n"))
	// Output:
	// "print('hi')\n"
	// "//! ```\n//! x\n/*!\n```\nlet x = 1;\n```\n*/\nfn main() {}\n"
	// "\"\"\"\nrequests.hooks\n~~~~~~~~~~~~~~\n\"\"\"\nHOOKS = []\n"
}
