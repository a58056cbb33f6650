package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run the real command as "patchbench".
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"patchbench": func() { os.Exit(run(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})) },
	})
}

// TestScripts runs the CLI scripts under testdata/script: exit codes,
// output, and files left untouched on failure.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
