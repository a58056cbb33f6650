package repair

import (
	"bytes"
	"io"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// CollapseSpace exposes collapseSpace to the tests.
var CollapseSpace = collapseSpace

// FastApply runs both passes of the fast path over text against fsys:
// the file it patched, the new content and the placements; ok is false
// when the engine must decide. The file is read 7 bytes at a time, so
// that lines and hunks straddle the window's reads.
func FastApply(text string, fsys patch.FileSystem, reverse bool) (name string, content []byte, places []patch.Placement, ok bool) {
	open := func(name string) (io.ReadCloser, error) {
		b, err := fsys.ReadFile(name)
		return io.NopCloser(bytes.NewReader(b)), err
	}
	name, hunks, size, crc, err := fastPass(strings.NewReader(text), int64(len(text)), reverse, &places, open, 7, nil)
	if err != nil {
		return "", nil, nil, false
	}
	var b bytes.Buffer
	n2, h2, size2, crc2, err := fastPass(strings.NewReader(text), int64(len(text)), reverse, nil, open, 7, &b)
	if err != nil || n2 != name || h2 != hunks || size2 != size || crc2 != crc {
		panic("the fast path's second pass disagrees with its first")
	}
	return name, b.Bytes(), places, true
}
