//go:build lean

package main

import "github.com/spf13/cobra"

// benchCommands is empty in the lean build: see commands_full.go.
func benchCommands(sio stdio) []*cobra.Command { return nil }
