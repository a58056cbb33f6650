package repair

import (
	"strings"
	"testing"
)

// checkSplice refuses a splice that loses a file line the hunk keeps, or
// that holds a line the hunk does not add; it passes the true one.
func TestCheckSplice(t *testing.T) {
	tx := newText("a\nb\nc\nd\n")
	h := parseUnified("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", &diags{})[0].hunks[0]
	pl := &placed{h: h, es: entries(h), p: place{start: 0, end: 3, at: []int{0, 1, 2}}}
	for _, c := range []struct {
		out  []string
		want string
	}{
		{[]string{"a", "B", "c"}, ""},
		{[]string{"a", "  B", "c"}, ""}, // re-indented
		{[]string{"a", "B"}, "file line 3 would disappear"},
		{[]string{"B", "c"}, `would hold "c"`}, // "a" lost
		{[]string{"a", "b", "B", "c"}, `would hold "b"`},
		{[]string{"a", "B", "B", "c"}, `would hold "B"`},
		{[]string{"c", "B", "a"}, `would hold "c"`}, // reordered
	} {
		got := checkSplice(tx, pl, c.out)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%q: %q, want %q", c.out, got, c.want)
		}
	}
}
