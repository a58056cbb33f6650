package benchcli

import (
	"fmt"

	"github.com/patchbench/patchbench/internal/cli"
	"github.com/patchbench/patchbench/report/html"
)

// The HTML page links the Vega bundles; only this binary carries them.
func init() { cli.ReportHTML = reportHTML }

func reportHTML(out string, dirs []string, sio cli.Stdio) error {
	names := cli.RunNames(dirs)
	runs := make([]html.Run, len(dirs))
	counts := make([]int, len(dirs)) // rows of each run in the page's last pass
	for i, d := range dirs {
		r, err := html.Load(names[i], d)
		if err != nil {
			return cli.Usage(fmt.Errorf("report: %w", err))
		}
		each := r.Each
		r.Each = func(fn func(map[string]any) error) error {
			counts[i] = 0
			return each(func(row map[string]any) error { counts[i]++; return fn(row) })
		}
		runs[i] = r
	}
	if err := html.WriteFile(out, "", runs); err != nil {
		return err
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	_, err := fmt.Fprintf(sio.Err, "%s: %d cases of %d runs written to %s\n", cli.ProgramName, n, len(runs), out)
	return err
}
