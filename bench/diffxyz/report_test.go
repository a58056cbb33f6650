package diffxyz

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// TestReportKeepsFormatsApart: a run with the defaults asks the paper's
// four formats; every table of its report splits by task, format and
// prompt (language, size class and change kind within them) and none has
// a row pooled over all rows. v4a, asked for, is a row of its own beside
// them.
func TestReportKeepsFormatsApart(t *testing.T) {
	for _, tt := range []struct {
		name    string
		formats []patch.Format
		want    []string
	}{
		{"defaults", nil, []string{"udiff", "udiff-h", "udiff-l", "search-replace"}},
		{"with v4a", patch.Formats, []string{"udiff", "udiff-h", "udiff-l", "search-replace", "v4a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			sum, err := Run(t.Context(), Options{
				Rows: synthRows(4), Formats: tt.formats,
				ModelOptions: runner.ModelOptions{Model: "reference"},
				Out:          out, Runner: runner.Options{Workers: 2},
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := 4 * len(Tasks) * len(tt.want); sum.Rows != want {
				t.Errorf("%d rows, want %d", sum.Rows, want)
			}
			for _, r := range sum.Report.Reports {
				if !slices.Equal(r.Dims[:3], []string{"task", "format", "prompt"}) || !r.NoTotal {
					t.Errorf("%s: dims %v, no_total %v; want task, format, prompt first and no total", r.Title, r.Dims, r.NoTotal)
				}
				var formats []string
				for _, g := range r.Groups {
					if !slices.Contains(formats, g.Values[1]) {
						formats = append(formats, g.Values[1])
					}
				}
				if diff := cmp.Diff(tt.want, formats); diff != "" {
					t.Errorf("%s: formats (-want +got):\n%s", r.Title, diff)
				}
			}
			md, err := os.ReadFile(filepath.Join(out, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(md), "\n") {
				if strings.HasPrefix(line, "| all |") {
					t.Errorf("report.md has a pooled row: %s", line)
				}
			}
			for _, h := range []string{"## By task, format, prompt and language", "## By task, format, prompt and size class", "## By task, format, prompt and change kind"} {
				if !strings.Contains(string(md), h+"\n") {
					t.Errorf("report.md lacks %q", h)
				}
			}
		})
	}
}
