package benchcli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/dataset"
	"github.com/patchbench/patchbench/hfhub"
	"github.com/patchbench/patchbench/runner"
)

// datasetFlagHelp is the --dataset help of every command that reads a
// benchmark's dataset.
const datasetFlagHelp = "; or a Hugging Face dataset `OWNER/NAME[@REVISION][:SPLIT]`, downloaded into the cache (see docs/datasets.md)"

// datasetPath turns a --dataset value into a local path (see
// dataset.Resolve), printing where a Hugging Face dataset id was found. A
// dataset, revision or split that does not exist is a usage error; a
// failed download is an operation that did not succeed.
func datasetPath(ctx context.Context, arg string, sio cli.Stdio) (string, error) {
	p := runner.ProgressTo(sio.Err)
	path, d, err := dataset.Resolve(ctx, arg, dataset.Hub{Getenv: os.Getenv, Progress: p.Writer, Terminal: p.Terminal})
	var nf *hfhub.NotFoundError
	var ie *dataset.InputError
	switch {
	case errors.As(err, &nf):
		return "", cli.Usage(fmt.Errorf("--dataset %s: no such file, and %w", arg, err))
	case errors.As(err, &ie):
		return "", cli.Usage(err)
	case err != nil:
		return "", cli.Failed(fmt.Errorf("--dataset %s: %w", arg, err))
	}
	if d != nil {
		fmt.Fprintf(sio.Err, "dataset %s@%.12s split %s: %s\n", d.Repo, d.Commit, d.Split, d.Path)
	}
	return path, nil
}
