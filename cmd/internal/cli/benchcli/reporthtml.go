package benchcli

import (
	"fmt"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/internal/pageedit"
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
	n, err := html.WriteFile(out, "", runs, pageKinds()...)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(sio.Err, "%s: %d cases of %d runs written to %s\n", cli.ProgramName, n, len(runs), out)
	return err
}

// pageKinds are the kinds a run's rows are read as, in order: each
// benchmark's, then the generic kind, which shows the edit found in a
// row's response.
func pageKinds() []*html.Kind {
	var kinds []*html.Kind
	for _, b := range benchmarks() {
		kinds = append(kinds, b.Page)
	}
	g := html.Generic()
	g.Match = func(map[string]any) bool { return true }
	g.Edit = pageedit.FromResponse
	return append(kinds, g)
}
