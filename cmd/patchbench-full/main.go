// Command patchbench-full is patchbench with every command linked in: the
// patch engine's and the benchmarks' (swe, diffxyz, env), which need the
// model SDKs, SQLite and Parquet. patchbench runs it for those commands;
// it can also be run directly.
package main

import (
	"os"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/cmd/internal/cli/benchcli"
)

func main() {
	os.Exit(benchcli.Run(os.Args[1:], cli.OSStdio()))
}
