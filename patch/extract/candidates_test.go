package extract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/extract"
)

const hunk = "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"

// TestCandidates checks what Extract says about the candidates it did not
// take.
func TestCandidates(t *testing.T) {
	type want struct {
		kind, lang     string
		start, end     int
		isEdit, chosen bool
		reason         string // a part of Reason
	}
	tests := []struct {
		name  string
		input string
		want  []want
	}{
		{
			name:  "full file beside the diff",
			input: "```diff\n" + hunk + "```\n\n```python\nx = 1\ny = 3\n```\n",
			want: []want{
				{"fence", "diff", 1, 8, true, true, "udiff edit, 1 hunk; chosen"},
				{"fence", "python", 10, 13, false, false, "python code, not an edit; not chosen: the edit is at lines 1-8"},
			},
		},
		{
			name:  "tag around a fence",
			input: "<patch>\n```diff\n" + hunk + "```\n</patch>\n",
			want: []want{
				{"tag", "patch", 1, 10, true, false, "holds the edit at lines 2-9, which is used instead"},
				{"fence", "diff", 2, 9, true, true, "chosen"},
			},
		},
		{
			name:  "repeated diff",
			input: "```diff\n" + hunk + "```\nAgain:\n```diff\n" + hunk + "```\n",
			want: []want{
				{"fence", "diff", 1, 8, true, true, "chosen"},
				{"fence", "diff", 10, 17, true, false, "repeats the edit at lines 1-8, dropped"},
			},
		},
		{
			name:  "other format",
			input: "```diff\n" + hunk + "```\nf.py\n<<<<<<< SEARCH\ny = 2\n=======\ny = 3\n>>>>>>> REPLACE\n",
			want: []want{
				{"fence", "diff", 1, 8, true, true, "chosen"},
				{"search-replace", "f.py", 10, 14, true, false, "the udiff edit at lines 1-8 is preferred"},
			},
		},
		{
			name:  "reasoning draft",
			input: "<think>\n```diff\n" + hunk + "```\n</think>\n```diff\n" + strings.Replace(hunk, "y = 3", "y = 4", 1) + "```\n",
			want: []want{
				{"fence", "diff", 2, 9, true, false, "inside <think> reasoning"},
				{"fence", "diff", 11, 18, true, true, "chosen"},
			},
		},
		{
			name:  "unterminated envelope",
			input: "*** Begin Patch\n*** Add File: a.txt\n+hi\n",
			want: []want{
				{"v4a", "", 1, 3, true, true, `no "*** End Patch": added`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := extract.Extract(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) != len(tt.want) {
				t.Fatalf("got %d candidates, want %d:\n%s", len(res.Candidates), len(tt.want), dump(res.Candidates))
			}
			for i, w := range tt.want {
				c := res.Candidates[i]
				if c.Kind != w.kind || c.Lang != w.lang || c.StartLine != w.start || c.EndLine != w.end ||
					c.IsEdit != w.isEdit || c.Chosen != w.chosen || !strings.Contains(c.Reason, w.reason) {
					t.Errorf("candidate %d:\n%s\nwant %+v", i, dump([]extract.Candidate{c}), w)
				}
			}
		})
	}
}

// TestNoEditResult checks that a failed extraction still lists what it saw,
// and that the errors wrap the sentinels.
func TestNoEditResult(t *testing.T) {
	res, err := extract.Extract("Here:\n```go\nfunc f() {}\n```\n")
	if !errors.Is(err, extract.ErrNoEdit) {
		t.Fatalf("err = %v, want ErrNoEdit", err)
	}
	if res == nil || len(res.Candidates) != 1 || res.Text != "" || res.Candidates[0].Kind != "fence" {
		t.Fatalf("result %+v, want one fence candidate and no text", res)
	}
	if want := "extract: no edit found: ```go fence (lines 2-4): no edit markers: go code, not an edit"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}

	for _, in := range []string{"", " \n\t\r\n", "<|im_end|>"} {
		res, err := extract.Extract(in)
		if !errors.Is(err, extract.ErrEmpty) || errors.Is(err, extract.ErrNoEdit) || res != nil {
			t.Errorf("Extract(%q) = %v, %v; want nil, ErrEmpty", in, res, err)
		}
	}
}

// TestParses checks that extracted texts of each format go through the
// parser of package patch.
func TestParses(t *testing.T) {
	for _, in := range []string{
		"Fix:\n```diff\n" + hunk + "```\nDone.\n",
		"a.py\n```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\n**b.py**\n```\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n```\n",
		"```bash\napply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\nEOF\n```\nand\n*** Begin Patch\n*** Add File: b.txt\n+hi\n*** End Patch\n",
	} {
		res, err := extract.Extract(in)
		if err != nil {
			t.Fatal(err)
		}
		p, err := patch.Parse(res.Text, res.Format, patch.DefaultParseOptions)
		if err != nil {
			t.Errorf("parse %s: %v\n%s", res.Format, err, res.Text)
			continue
		}
		if len(p.Diagnostics) > 0 {
			t.Errorf("parse %s: diagnostics %v", res.Format, p.Diagnostics)
		}
		if res.Format != patch.UDiff && len(p.Files) != 2 {
			t.Errorf("%s: %d files, want 2", res.Format, len(p.Files))
		}
	}
}
