package loc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/symbols"
)

// Validate checks every case against its repository: the repository and
// base_commit exist, every ground-truth file exists at base_commit, every
// range is well formed and inside the file, every function is a function
// of the file's syntax tree, and every range lies inside its context
// range. It returns one Problem per fault, naming the case.
func Validate(ctx context.Context, cases []Case, store *repo.Store) []Problem {
	p := symbols.NewParser()
	defer p.Close()
	var problems []Problem
	for _, c := range cases {
		for _, err := range validateCase(ctx, c, store, p) {
			problems = append(problems, Problem{ID: c.ID, Err: err.Error()})
		}
	}
	return problems
}

func validateCase(ctx context.Context, c Case, store *repo.Store, p *symbols.Parser) []error {
	if c.Repo == "" || c.BaseCommit == "" {
		return []error{errors.New("no repo or base_commit")}
	}
	if len(c.GroundTruth.Files) == 0 {
		return []error{errors.New("empty ground truth")}
	}
	rp, err := store.Get(ctx, c.Repo)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", c.Repo, repoError(store, c.Repo, err))}
	}
	if _, err := rp.ResolveCommit(ctx, c.BaseCommit); err != nil {
		return []error{fmt.Errorf("base_commit %s: %w", c.BaseCommit, err)}
	}
	var errs []error
	for _, path := range c.GroundTruth.Paths() {
		ft := c.GroundTruth.Files[path]
		src, err := rp.ReadFile(ctx, c.BaseCommit, path)
		if errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: file does not exist at base_commit", path))
			continue
		} else if err != nil {
			errs = append(errs, err)
			continue
		}
		n := lineCount(src)
		if len(ft.Ranges) == 0 {
			errs = append(errs, fmt.Errorf("%s: no ranges", path))
		}
		for i, r := range ft.Ranges {
			if r[0] < 1 || r[1] < r[0] || r[1] > n {
				errs = append(errs, fmt.Errorf("%s: range %d [%d, %d] outside the file's lines 1-%d", path, i+1, r[0], r[1], n))
			}
		}
		if len(ft.Context) > 0 {
			if len(ft.Context) != len(ft.Ranges) {
				errs = append(errs, fmt.Errorf("%s: %d context ranges for %d ranges", path, len(ft.Context), len(ft.Ranges)))
			} else {
				for i, r := range ft.Ranges {
					cr := ft.Context[i]
					if cr[0] < 1 || cr[1] > n {
						errs = append(errs, fmt.Errorf("%s: context range [%d, %d] outside the file's lines 1-%d", path, cr[0], cr[1], n))
					} else if r[0] < cr[0] || r[1] > cr[1] {
						errs = append(errs, fmt.Errorf("%s: range %d [%d, %d] not inside its context range [%d, %d]", path, i+1, r[0], r[1], cr[0], cr[1]))
					}
				}
			}
		}
		if len(ft.Functions) == 0 {
			continue
		}
		if symbols.LanguageOf(path) == "" {
			errs = append(errs, fmt.Errorf("%s: functions named in a file of no known language", path))
			continue
		}
		res, err := p.Parse(ctx, path, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		have := map[string]bool{}
		for _, s := range res.Symbols {
			if s.Kind != symbols.Class {
				have[s.Name] = true
			}
		}
		for _, f := range ft.Functions {
			if !have[f] {
				errs = append(errs, fmt.Errorf("%s: function %s not in the file's syntax tree", path, f))
			}
		}
	}
	return errs
}
