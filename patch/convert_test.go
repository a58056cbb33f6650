package patch_test

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// TestConvertRoundTrip: an edit converted to each format, then back to a
// unified diff, applies to the same file; between formats with line
// numbers the patch is given back as it is, without reading the files.
func TestConvertRoundTrip(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	neu := "a\nb\nC\nd\ne\nf\ng\nh\nI\nj\n"
	fsys := patch.MapFS{"f.txt": old}
	text, err := patch.DiffText(patch.UDiff, "f.txt", "f.txt", old, neu, patch.DefaultMakeOptions(), false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := patch.Parse(text, patch.UDiff, patch.ParseOptions{Strip: 1})
	if err != nil {
		t.Fatal(err)
	}
	if same, err := patch.Convert(p, nil, patch.UDiff, patch.UDiffL, 3); err != nil || same != p {
		t.Fatalf("udiff to udiff-l: %v, the same patch %v", err, same == p)
	}
	for _, to := range patch.Formats {
		t.Run(string(to), func(t *testing.T) {
			c, err := patch.Convert(p, fsys, patch.UDiff, to, 3)
			if err != nil {
				t.Fatal(err)
			}
			out, err := patch.Print(c, to)
			if err != nil {
				t.Fatal(err)
			}
			back, err := patch.Parse(out, to, patch.DefaultParseOptions)
			if err != nil {
				t.Fatalf("%s does not parse: %v\n%s", to, err, out)
			}
			res, err := patch.Apply(back, fsys, patch.ApplyOptions{})
			if err != nil || len(res) != 1 || string(res[0].Content) != neu {
				t.Fatalf("%s applied: %v, %+v", to, err, res)
			}
		})
	}
	// An edit that does not apply cannot be made anew.
	stale := patch.MapFS{"f.txt": strings.ToUpper(old)}
	if _, err := patch.Convert(p, stale, patch.UDiff, patch.V4A, 3); err == nil || !strings.Contains(err.Error(), "must apply") {
		t.Errorf("a stale edit converted: %v", err)
	}
	if text, err := patch.DiffText(patch.V4A, "f.txt", "f.txt", old, old, patch.DefaultMakeOptions(), false); err != nil || text != "" {
		t.Errorf("no change: %q, %v", text, err)
	}
}
