package benchcli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/envstore"
)

func newEnvReleaseCommand(sio cli.Stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "release DEST",
		Short: "Unmount an overlay restore and remove what was written to it",
		Long: `Undo an overlay restore (env restore as root): unmount DEST, remove its
upper layer (.NAME.overlay beside it: every file written through DEST) and
the empty mount point. The store is not changed. A DEST restored as files
is refused (exit 2): remove it as any directory.`,
		Args: ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := envstore.Release(args[0])
			if errors.Is(err, envstore.ErrNotRestored) {
				return cli.Usage(err)
			}
			if err != nil {
				return cli.Failed(err)
			}
			fmt.Fprintf(sio.Out, "released %s\n", args[0])
			return nil
		},
	}
}
