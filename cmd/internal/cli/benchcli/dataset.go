package benchcli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/hfhub"
	"github.com/patchbench/patchbench/runner"
)

// datasetFlagHelp is the --dataset help of every command that reads a
// benchmark's dataset.
const datasetFlagHelp = "; or a Hugging Face dataset `OWNER/NAME[@REVISION][:SPLIT]`, downloaded into the cache (see docs/datasets.md)"

// datasetPath turns a --dataset value into a local path: a file or
// directory that exists as given, else a Hugging Face dataset id, whose
// split's Parquet files hfhub downloads (or finds in the cache). Anything
// else is returned as given, for the loader to report. A dataset, revision
// or split that does not exist is a usage error; a failed download is an
// operation that did not succeed.
func datasetPath(ctx context.Context, arg string, sio cli.Stdio) (string, error) {
	if _, err := os.Stat(arg); err == nil || !hfhub.LooksLikeRef(arg) {
		return arg, nil
	}
	ref, err := hfhub.ParseRef(arg)
	if err != nil {
		return "", cli.Usage(err)
	}
	c, err := hfhub.FromEnv(os.Getenv)
	if err != nil {
		return "", cli.Usage(err)
	}
	p := runner.ProgressTo(sio.Err)
	c.Progress, c.Terminal = p.Writer, p.Terminal
	d, err := c.Resolve(ctx, ref)
	var nf *hfhub.NotFoundError
	if errors.As(err, &nf) {
		return "", cli.Usage(fmt.Errorf("--dataset %s: no such file, and %w", arg, err))
	}
	if err != nil {
		return "", cli.Failed(fmt.Errorf("--dataset %s: %w", arg, err))
	}
	fmt.Fprintf(sio.Err, "dataset %s@%.12s split %s: %s\n", ref.Repo, d.Commit, d.Split, d.Path)
	return d.Path, nil
}
