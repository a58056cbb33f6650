package benchcli

import (
	"fmt"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/report/html"
)

// The HTML page links the Vega bundles; only this binary carries them.
func init() { cli.ReportHTML = reportHTML }

func reportHTML(out string, dirs []string, sio cli.Stdio) error {
	names := cli.RunNames(dirs)
	runs := make([]html.Run, len(dirs))
	for i, d := range dirs {
		r, err := html.Load(names[i], d)
		if err != nil {
			return cli.Usage(fmt.Errorf("report: %w", err))
		}
		runs[i] = r
	}
	n, err := html.WriteFile(out, "", runs)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(sio.Err, "%s: %d cases of %d runs written to %s\n", cli.ProgramName, n, len(runs), out)
	return err
}
