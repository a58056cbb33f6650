package patch

import (
	"strings"
	"testing"
)

// TestUDiffHBlankAfterNoEOL: a udiff-h edit of a file without a final
// newline (psf/requests@cc2c54093e97, requests/utils.py, the last line
// replaced) followed by the blank lines a model leaves before its closing
// fence parses and applies as without them; a hunk line of the ended side
// after the blank line is still refused.
func TestUDiffHBlankAfterNoEOL(t *testing.T) {
	old := "def curl(request):\n    #: Params handled in _build_url\n    return curl_cmd + data"
	want := "def curl(request):\n    #: Params handled in _build_url\n    return curl + auth + data\n"
	edit := "--- a/requests/utils.py\n+++ b/requests/utils.py\n@@ @@\n     #: Params handled in _build_url\n" +
		"-    return curl_cmd + data\n\\ No newline at end of file\n+    return curl + auth + data\n"
	for _, tail := range []string{"", "\n", "\n\n", "\n\n\n"} {
		p, err := ParseUDiffH(edit+tail, DefaultParseOptions)
		if err != nil {
			t.Fatalf("%d blank lines: %v", strings.Count(tail, "\n"), err)
		}
		got, _, err := ApplyFile(old, p.Files[0], ApplyOptions{})
		if err != nil || got != want {
			t.Errorf("%d blank lines: got %q, %v; want %q", strings.Count(tail, "\n"), got, err, want)
		}
	}
	if _, err := ParseUDiffH(edit+"\n-    return curl_cmd + data\n", DefaultParseOptions); err == nil {
		t.Error("a removed line after the old side's end, past a blank line, parsed")
	}
}
