// Package benchcli holds patchbench's benchmark commands (swe, diffxyz,
// env, loc, ape) and the MCP server (mcp), which need the model SDKs,
// SQLite, Parquet and the MCP SDK. They are linked into
// the patchbench-full binary; patchbench hands them to it (see package
// cli).
package benchcli

import (
	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/cmd/internal/cli"
)

// Names are the commands of this package, which patchbench hands over to
// patchbench-full.
var Names = []string{"swe", "diffxyz", "env", "loc", "ape", "merge", "mcp"}

// Commands returns the benchmark commands.
func Commands(sio cli.Stdio) []*cobra.Command {
	return []*cobra.Command{newSWECommand(sio), newDiffxyzCommand(sio), newEnvCommand(sio), newLocCommand(sio), newApeCommand(sio), newMergeCommand(sio), newK8sCommand(sio), newMCPCommand(sio)}
}
