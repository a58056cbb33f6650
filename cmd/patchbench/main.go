// Command patchbench parses, converts, applies and generates code edits.
// Agents run it once per edit, so it links only the patch engine: the
// benchmark commands (swe, diffxyz, env) are handed to patchbench-full,
// installed beside it (go install ./cmd/...), which has every command.
//
// Exit codes: 0 success; 1 the operation did not succeed (a patch was
// refused, a run had failures); 2 usage or input error.
package main

import (
	"os"

	"github.com/patchbench/patchbench/cmd/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], cli.OSStdio()))
}
