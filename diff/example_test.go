package diff_test

import (
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/diff"
)

func ExampleLines() {
	a := strings.Split("one\ntwo\nthree\nfour", "\n")
	b := strings.Split("one\n2\nthree\nfour\nfive", "\n")
	for _, e := range diff.Lines(a, b, diff.Histogram) {
		fmt.Printf("old %d-%d %q -> new %d-%d %q\n",
			e.OldStart, e.OldEnd, a[e.OldStart:e.OldEnd],
			e.NewStart, e.NewEnd, b[e.NewStart:e.NewEnd])
	}
	// Output:
	// old 1-2 ["two"] -> new 1-2 ["2"]
	// old 4-4 [] -> new 4-5 ["five"]
}

// Applying a script: copy the unchanged lines between edits, and each
// edit's new lines instead of its old ones.
func ExampleLines_apply() {
	a := []string{"a", "b", "c", "d"}
	b := []string{"a", "c", "d", "e"}
	var out []string
	last := 0
	for _, e := range diff.Lines(a, b, diff.Myers) {
		out = append(out, a[last:e.OldStart]...)
		out = append(out, b[e.NewStart:e.NewEnd]...)
		last = e.OldEnd
	}
	out = append(out, a[last:]...)
	fmt.Println(out)
	// Output:
	// [a c d e]
}

// A last line without a newline must compare different from the same text
// with one; marking it with a "\n" that no split line holds does that.
func ExampleLines_noFinalNewline() {
	split := func(s string) []string {
		ls := strings.SplitAfter(s, "\n")
		if ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		for i, l := range ls {
			if strings.HasSuffix(l, "\n") {
				ls[i] = l[:len(l)-1]
			} else {
				ls[i] = l + "\n" // no newline: mark it
			}
		}
		return ls
	}
	es := diff.Lines(split("x\ny\n"), split("x\ny"), diff.Histogram)
	fmt.Printf("%+v\n", es)
	// Output:
	// [{OldStart:1 OldEnd:2 NewStart:1 NewEnd:2}]
}

func ExampleChanged() {
	a := []string{"a", "b", "c"}
	b := []string{"a", "x", "y", "c"}
	deleted, inserted := diff.Changed(diff.Lines(a, b, diff.Myers))
	fmt.Println(deleted, inserted)
	// Output:
	// 1 2
}

func ExampleParseAlgorithm() {
	for _, name := range []string{"myers", "", "patience"} {
		alg, err := diff.ParseAlgorithm(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q: %v\n", name, alg)
	}
	// Output:
	// "myers": myers
	// "": histogram
	// unknown diff algorithm "patience" (want histogram or myers)
}
