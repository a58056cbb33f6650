package main

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/confinetest"
)

// TestConfineCLI: every command that reads or writes patch targets (apply
// strict and tolerant, forward and reverse, --check, repair, convert)
// refuses every confinement case with exit 1, an error naming the path, and
// nothing written. convert reads the files only for formats without line
// numbers, so it is run on the V4A cases and to V4A.
func TestConfineCLI(t *testing.T) {
	for _, c := range confinetest.Cases {
		commands := [][]string{
			{"apply", "--strict"}, {"apply"}, {"apply", "--strict", "-R"}, {"apply", "-R"},
			{"apply", "--check"}, {"repair"}, {"convert", "--to", "v4a"},
		}
		if c.Format == "v4a" {
			commands = append(commands, []string{"convert", "--to", "udiff"})
		}
		for _, cmd := range commands {
			t.Run(c.Name+"/"+strings.Join(cmd, " "), func(t *testing.T) {
				tr := confinetest.New(t)
				args := append(append([]string{}, cmd...), "-C", tr.Dir, "-")
				code, _, stderr := runCLI(t, tr.Patch(c), args...)
				strictReverse := strings.Contains(strings.Join(cmd, " "), "--strict -R")
				if want := tr.Want(c, strictReverse); code != 1 || !strings.Contains(stderr, want) {
					t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
				}
				tr.Unchanged(t)
			})
		}
	}
}
