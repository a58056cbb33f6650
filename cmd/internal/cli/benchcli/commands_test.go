package benchcli

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/diffxyz"
	"github.com/patchbench/patchbench/cmd/internal/cli"
)

// TestOneDescription: each command patchbench hands over to
// patchbench-full is there, described in the same words in both binaries.
func TestOneDescription(t *testing.T) {
	full := map[string]string{}
	for _, c := range Commands(cli.Stdio{}) {
		full[c.Name()] = c.Short
	}
	for _, c := range cli.FullOnly {
		short, ok := full[c.Name]
		if !ok {
			t.Errorf("patchbench hands %s over, but patchbench-full has no such command", c.Name)
			continue
		}
		if short != c.Short {
			t.Errorf("%s: patchbench-full says %q, patchbench %q", c.Name, short, c.Short)
		}
	}
}

// TestReportHelpNamesEveryTable: report --help names every table of a
// Diff-XYZ report.json, in the words of their titles (it listed three of
// four).
func TestReportHelpNamesEveryTable(t *testing.T) {
	var long string
	for _, c := range cli.Engine(cli.Stdio{}) {
		if c.Name() == "report" {
			long = strings.Join(strings.Fields(c.Long), " ")
		}
	}
	if long == "" {
		t.Fatal("no report command")
	}
	for _, g := range diffxyz.Groupings {
		if !strings.Contains(long, strings.ToLower(g.Title)) {
			t.Errorf("report --help does not name the table %q:\n%s", g.Title, long)
		}
	}
}
