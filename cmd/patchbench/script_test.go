package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/patchbench/patchbench/internal/cli"
)

// TestMain lets testscript run the real command as "patchbench".
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"patchbench": func() { os.Exit(run(os.Args[1:], cli.OSStdio())) },
	})
}

// TestScripts runs the CLI scripts under testdata/script: exit codes,
// output, and files left untouched on failure.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
