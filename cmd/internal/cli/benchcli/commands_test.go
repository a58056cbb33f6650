package benchcli

import (
	"testing"

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
