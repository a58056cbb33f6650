package repair

import (
	"bytes"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// CollapseSpace exposes collapseSpace to the tests.
var CollapseSpace = collapseSpace

// FastApply runs both passes of the fast path over text against fsys:
// the file it patched, the new content and the placements; ok is false
// when the engine must decide. lines counts the file and patch lines the
// passes looked at, for the tests that bound the work per hunk.
func FastApply(text string, fsys patch.FileSystem, reverse bool) (name string, content []byte, places []patch.Placement, ok bool) {
	var c []byte
	open := func(name string) ([]byte, error) {
		var err error
		c, err = fsys.ReadFile(name)
		return c, err
	}
	name, hunks, err := fastPass(strings.NewReader(text), reverse, &places, open, nil)
	if err != nil {
		return "", nil, nil, false
	}
	var b bytes.Buffer
	same := func(string) ([]byte, error) { return c, nil }
	n2, h2, err := fastPass(strings.NewReader(text), reverse, nil, same, &b)
	if err != nil || n2 != name || h2 != hunks {
		panic("the fast path's second pass disagrees with its first")
	}
	return name, b.Bytes(), places, true
}
