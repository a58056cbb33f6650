package benchcli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/cmd/internal/cli"
)

func newEnvStatsCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats --store DIR [--json]",
		Short: "Commits, files, bytes of the trees and bytes stored",
		Long: `Print the store's totals: stored commits, their files, the bytes the trees
would take as copies (logical), the bytes the store takes (objects loose
and compressed as they are on disk, manifests, git map) and their ratio,
and beside them the bytes with every object whole (dedup alone, before
compression). --json prints {"commits", "files", "logical_bytes",
"stored_bytes", "uncompressed_stored_bytes", ...}.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			st, err := s.Stats()
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				return cli.WriteJSON(sio, st)
			}
			fmt.Fprintf(sio.Out, "commits        %d (and %d failed setups)\nfiles          %d\nlogical bytes  %d (%s)\nstored bytes   %d (%s: %d objects %s, %d of them compressed; manifests %s)\nuncompressed   %d (%s: every object whole, dedup alone: %.1fx)\nratio          %.1fx\n",
				st.Commits, st.Failed, st.Files, st.LogicalBytes, cli.SizeString(st.LogicalBytes), st.StoredBytes, cli.SizeString(st.StoredBytes),
				st.Objects, cli.SizeString(st.ObjectBytes), st.Compressed, cli.SizeString(st.ManifestBytes),
				st.UncompressedBytes, cli.SizeString(st.UncompressedBytes), st.DedupRatio(), st.Ratio())
			return nil
		},
	}
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}

func newEnvVerifyCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	var workers int
	cmd := &cobra.Command{
		Use:   "verify --store DIR",
		Short: "Re-hash every object and check every manifest; exit 1 on any problem, naming it",
		Args:  ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			rep, err := s.Verify(cmd.Context(), workers)
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				if err := cli.WriteJSON(sio, rep); err != nil {
					return err
				}
			} else {
				for _, p := range rep.Problems {
					fmt.Fprintln(sio.Out, p)
				}
				fmt.Fprintf(sio.Out, "%d objects, %d manifests, %d problems", rep.Objects, rep.Manifests, len(rep.Problems))
				if rep.Temporary > 0 {
					fmt.Fprintf(sio.Out, "; %d temporary files of interrupted builds (env gc removes them)", rep.Temporary)
				}
				fmt.Fprintln(sio.Out)
			}
			if !rep.OK() {
				return cli.Failed(fmt.Errorf("env verify: %d problems in %s", len(rep.Problems), s.Dir()))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&workers, "workers", 0, "objects hashed at once (0: one per CPU)")
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}

func newEnvGCCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gc --store DIR",
		Short: "Remove objects no manifest names, and what interrupted builds left; compress unused loose objects",
		Long: `Remove the objects no manifest names and the temporary files of
interrupted builds, and compress the loose objects that no materialized
tree or hard-linked restore links (a store of format 2 becomes format 3).
gc waits for running builds, materializations and restores that make
files, and they wait for it (a lock each holds shared), so it is safe to
run at any time.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			res, err := s.GC(cmd.Context())
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				return cli.WriteJSON(sio, res)
			}
			fmt.Fprintf(sio.Out, "removed %d objects (%s) and %d temporary entries; compressed %d objects (%s saved)\n",
				res.Objects, cli.SizeString(res.Bytes), res.Temporary, res.Compressed, cli.SizeString(res.SavedBytes))
			return nil
		},
	}
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}

func newEnvLsCommand(sio cli.Stdio, g *envOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls --store DIR [--json]",
		Short: "List stored commits and failed setups",
		Args:  ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.open(false)
			if err != nil {
				return err
			}
			list, err := s.List()
			if err != nil {
				return cli.Failed(err)
			}
			if g.json {
				return cli.WriteJSON(sio, list)
			}
			for _, in := range list {
				if in.Status == "failed" {
					fmt.Fprintf(sio.Out, "%s  failed (exit %d)  %s  %s\n", in.Commit, in.ExitCode, in.Created, in.Setup)
					continue
				}
				fmt.Fprintf(sio.Out, "%s  %d files, %s  %s  %s\n", in.Commit, in.Files, cli.SizeString(in.Bytes), in.Created, in.Setup)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return cmd
}
