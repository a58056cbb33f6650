// Command patchbench parses, converts, applies and generates code edits.
// Agents run it once per edit, so it links only the patch engine: the
// benchmark commands (swe, diffxyz, env) are handed to patchbench-full,
// installed beside it (go install ./cmd/...), which has every command.
//
// Exit codes: 0 success; 1 the operation did not succeed (a patch was
// refused, a run had failures); 2 usage or input error.

// A command that ends in milliseconds gains nothing from the runtime's
// reading of the cgroup CPU limit at start (several files under /proc and
// /sys) nor from re-reading it in the background (issue 8 §5).
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/patchbench/patchbench/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], cli.OSStdio(), cli.HandOver))
}
