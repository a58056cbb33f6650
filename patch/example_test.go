package patch_test

import (
	"fmt"

	"github.com/patchbench/patchbench/patch"
)

// Make an edit, print it as a unified diff, convert it to V4A and apply
// the parsed V4A back with exact (strict) context.
func Example() {
	old := "def f():\n    return 1\n"
	fp := patch.Make("f.py", "f.py", old, "def f():\n    return 2\n", patch.DefaultMakeOptions())
	p := &patch.Patch{Files: []*patch.FilePatch{fp}}

	udiff, _ := patch.Print(p, patch.UDiff)
	fmt.Print(udiff)

	v4a, _ := patch.Print(p, patch.V4A)
	q, err := patch.Parse(v4a, patch.V4A, patch.ParseOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := patch.Apply(q, patch.MapFS{"f.py": old}, patch.ApplyOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s:\n%s", res[0].Path, res[0].Content)
	// Output:
	// diff --git a/f.py b/f.py
	// --- a/f.py
	// +++ b/f.py
	// @@ -1,2 +1,2 @@
	//  def f():
	// -    return 1
	// +    return 2
	// f.py:
	// def f():
	//     return 2
}

// A hunk whose context is not in the file is refused, and nothing is
// returned to write.
func ExampleApply_refused() {
	text := "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n def g():\n-    return 1\n+    return 2\n"
	p, _ := patch.Parse(text, patch.UDiff, patch.ParseOptions{})
	res, err := patch.Apply(p, patch.MapFS{"f.py": "def f():\n    return 1\n"}, patch.ApplyOptions{})
	fmt.Println(len(res), err != nil)
	// Output:
	// 0 true
}
