package benchcli

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/diffxyz"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/internal/atomicfile"
)

type diffxyzBuildOptions struct {
	repo, rev, lang, name, out string
	n                          int
	seed                       int64
}

func newDiffxyzBuildCommand(sio cli.Stdio) *cobra.Command {
	var o diffxyzBuildOptions
	cmd := &cobra.Command{
		Use:   "build --repo GITDIR --n N [flags]",
		Short: "Build a Diff-XYZ dataset from a git history",
		Long: `Build a dataset in the Diff-XYZ schema from the history of a git repository,
with the paper's filter: commits (no merges) that modify exactly one file of
the language, 40 to 1000 lines before and after, not whitespace only, and not
binary, vendored (vendor/, third_party/, node_modules/, ...), minified or
generated ("Code generated", "DO NOT EDIT", "@generated" near the top), taken
40/40/20 from small (≤ 7 changed lines), medium (8–24) and large (> 24) edits,
each class half single-hunk and half multi-hunk (a short side is filled from
the other). Within each size class candidates are taken in an order fixed by
--seed.
When a class runs short the dataset is smaller than N (said on stderr). Each
row records its size class, change kind (add+delete, add-only, delete-only)
and hunk count; the summary on stderr counts them, and the refusals by reason.

Rows are written as JSONL to --out (gzipped when it ends in .gz) or standard
output. The udiff column is git's diff; diffxyz run generates the others.

Exit status: 0 built; 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiffxyzBuild(cmd.Context(), o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "git repository `GITDIR` (working tree or bare)")
	f.StringVar(&o.rev, "rev", "HEAD", "revision whose history is searched")
	f.StringVar(&o.lang, "lang", "", "language `L` (python, javascript, java, kotlin, rust, go, ...); default: every known one")
	f.IntVar(&o.n, "n", 100, "number of rows")
	f.Int64Var(&o.seed, "seed", 0, "seed of the selection")
	f.StringVar(&o.name, "name", "", "repository name for the repo column and ids (default: the directory's name)")
	f.StringVar(&o.out, "out", "-", "output `FILE` (.jsonl or .jsonl.gz; - for standard output)")
	return cmd
}

func runDiffxyzBuild(ctx context.Context, o diffxyzBuildOptions, sio cli.Stdio) error {
	if o.repo == "" {
		return cli.Usage(errors.New("diffxyz build: --repo is required"))
	}
	rows, st, err := diffxyz.Build(ctx, diffxyz.BuildOptions{Repo: o.repo, Rev: o.rev, Lang: o.lang, N: o.n, Seed: o.seed, Name: o.name})
	if err != nil {
		return cli.Usage(err)
	}
	if err := writeRows(o.out, rows, sio); err != nil {
		return cli.Failed(err)
	}
	fmt.Fprint(sio.Err, buildSummary(st, rows))
	if len(rows) < o.n {
		fmt.Fprintf(sio.Err, "%s: warning: only %d of %d rows: too few candidates pass the filter\n", cli.ProgramName, len(rows), o.n)
	}
	return nil
}

// buildSummary says what a build read, refused and wrote: the size strata
// and change kinds of the rows, and their hunks.
func buildSummary(st diffxyz.BuildStats, rows []*diffxyz.Row) string {
	var b strings.Builder
	counts := func(m map[string]int, keys []string) string {
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(&b, "%s: %d commits read; candidates by size: %s\n", cli.ProgramName, st.Commits, counts(st.Candidates, diffxyz.SizeClasses))
	if len(st.Rejected) > 0 {
		fmt.Fprintf(&b, "%s: refused: %s\n", cli.ProgramName, counts(st.Rejected, slices.Sorted(maps.Keys(st.Rejected))))
	}
	hunks := map[string]int{}
	for _, r := range rows {
		if r.NHunks > 1 {
			hunks["multi"]++
		} else {
			hunks["single"]++
		}
	}
	fmt.Fprintf(&b, "%s: wrote %d rows; by size: %s; by change kind: %s; by hunks: %s\n", cli.ProgramName, len(rows),
		counts(st.Selected, diffxyz.SizeClasses), counts(st.Kinds, diffxyz.ChangeKinds), counts(hunks, []string{"single", "multi"}))
	return b.String()
}

// writeRows writes rows as JSONL to path (gzipped for .gz), atomically, or
// to standard output for "-".
func writeRows(path string, rows []*diffxyz.Row, sio cli.Stdio) error {
	if path == "-" {
		return diffxyz.WriteJSONL(sio.Out, rows)
	}
	return atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error {
		if !strings.HasSuffix(path, ".gz") {
			return diffxyz.WriteJSONL(w, rows)
		}
		zw := gzip.NewWriter(w)
		if err := diffxyz.WriteJSONL(zw, rows); err != nil {
			return err
		}
		return zw.Close()
	})
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}
