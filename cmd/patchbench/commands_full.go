//go:build !lean

package main

import "github.com/spf13/cobra"

// benchCommands are the commands that need the model SDKs, SQLite or
// Parquet (env needs bench/swe's instance loader). The lean build (go build -tags lean) leaves them out, and with
// them those libraries' package initialisation, which is most of the
// default build's start-up time and memory (see README, "Start-up").
func benchCommands(sio stdio) []*cobra.Command {
	return []*cobra.Command{newSWECommand(sio), newDiffxyzCommand(sio), newEnvCommand(sio)}
}
