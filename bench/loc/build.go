package loc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/patchbench/patchbench/dataset"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/symbols"
)

// Problem is what went wrong with one case: the case is left out (build)
// or reported (validate, run) and the others go on.
type Problem struct {
	ID  string `json:"id"`
	Err string `json:"error"`
	// Rows is how many rows the problem leaves out when more than one (a
	// repository missing for several rows).
	Rows int `json:"rows,omitempty"`
}

// RowsOf counts the rows problems leave out.
func RowsOf(problems []Problem) int {
	n := 0
	for _, p := range problems {
		n += max(1, p.Rows)
	}
	return n
}

func (p Problem) String() string { return p.ID + ": " + p.Err }

// BuildFromDataset makes cases from a dataset in the SWE-bench schema
// (instance_id, repo, base_commit, problem_statement, patch; JSON Lines,
// JSON or Parquet) or the Loc-Bench_V1 schema (the same plus category and
// edit_functions). Repositories come from store. A row whose repository,
// commit or patch cannot be used is a Problem; the other rows go on. A
// repository that cannot be had (missing, its clone failed) is one Problem
// naming it and the rows it leaves out.
func BuildFromDataset(ctx context.Context, path string, store *repo.Store) ([]Case, []Problem, error) {
	rows, bad, err := dataset.Read[map[string]any](path, dataset.Options{KeyField: "instance_id"})
	if err != nil {
		return nil, nil, fmt.Errorf("loc build: %w", err)
	}
	p := symbols.NewParser()
	defer p.Close()
	var cases []Case
	var problems []Problem
	for _, e := range bad {
		problems = append(problems, Problem{ID: e.Pos.String(), Err: e.Err.Error()})
	}
	seen := map[string]bool{}
	missing := map[string]*repoFailure{}
	var order []string
	for i, row := range rows {
		c := Case{
			ID:         str(row["instance_id"]),
			Repo:       str(row["repo"]),
			BaseCommit: str(row["base_commit"]),
			Query:      strings.TrimSpace(str(row["problem_statement"])),
			Category:   str(row["category"]),
			Source:     filepath.Base(path),
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("row %d", i+1)
		}
		fail := func(err error) { problems = append(problems, Problem{ID: c.ID, Err: err.Error()}) }
		switch {
		case seen[c.ID]:
			fail(errors.New("duplicate instance_id"))
			continue
		case c.Repo == "" || c.BaseCommit == "":
			fail(errors.New("row without repo or base_commit"))
			continue
		}
		seen[c.ID] = true
		if err := ctx.Err(); err != nil {
			return cases, problems, err
		}
		// A repository that cannot be had is tried once and named once,
		// with the rows it leaves out: a dataset of many repositories and
		// none at hand fails in one line each, not one clone a row.
		if g := missing[c.Repo]; g != nil {
			g.ids = append(g.ids, c.ID)
			continue
		}
		rp, err := store.Get(ctx, c.Repo)
		if err != nil {
			missing[c.Repo] = &repoFailure{err: err, ids: []string{c.ID}}
			order = append(order, c.Repo)
			continue
		}
		gt, err := TruthFromDiff(ctx, rp, c.BaseCommit, str(row["patch"]), p)
		if err != nil {
			fail(err)
			continue
		}
		c.GroundTruth = gt
		cases = append(cases, c)
	}
	for _, name := range order {
		g := missing[name]
		msg := repoError(store, name, g.err).Error()
		problems = append(problems, Problem{ID: name, Err: fmt.Sprintf("%s; %d rows left out: %s", msg, len(g.ids), idList(g.ids)), Rows: len(g.ids)})
	}
	return cases, problems, nil
}

// repoError says how to provide a repository the store does not hold
// (err wraps [repo.ErrNotInStore]); any other error is returned as it is.
func repoError(store *repo.Store, name string, err error) error {
	if !errors.Is(err, repo.ErrNotInStore) {
		return err
	}
	return fmt.Errorf("repository not in --repos %s: clone it to %s, or give --clone-from URL to clone missing repositories from URL/%s (https://github.com for GitHub)",
		store.Dir, filepath.Join(store.Dir, name), name)
}

// repoFailure is a repository a build could not have, and the rows it
// left out.
type repoFailure struct {
	err error
	ids []string
}

// idList names the first few ids.
func idList(ids []string) string {
	const show = 5
	if len(ids) <= show {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:show], ", ") + fmt.Sprintf(" and %d more", len(ids)-show)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// HistoryFilter selects the commits of a history build.
type HistoryFilter struct {
	// MaxFiles and MaxLines bound the files a commit changes and its
	// changed (added plus deleted) lines; 0 means no bound.
	MaxFiles, MaxLines int
	// MinLines is the fewest changed lines a commit must have.
	MinLines int
	// Kinds keeps commits of these kinds (see [CommitKind]); empty keeps all.
	Kinds []string
}

// Commit kinds, from the first line of the message.
var kindWords = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"docs", regexp.MustCompile(`(?i)\b(docs?|documentation|readme|typos?|changelog)\b`)},
	{"test", regexp.MustCompile(`(?i)\b(tests?|testing)\b`)},
	{"fix", regexp.MustCompile(`(?i)\b(fix(es|ed)?|bugs?|errors?|crash(es)?|regressions?|issues?|wrong|incorrect)\b`)},
	{"feature", regexp.MustCompile(`(?i)\b(add(s|ed)?|support(s|ed)?|feature|implement(s|ed)?|allow(s|ed)?|new|introduce[sd]?)\b`)},
	{"refactor", regexp.MustCompile(`(?i)\b(refactor(s|ed|ing)?|clean(s|ed|up)?|rename[sd]?|move[sd]?|simplif(y|ies|ied)|remove[sd]?)\b`)},
}

// CommitKind classifies a commit by the first line of its message: docs,
// test, fix, feature, refactor, or other (the first that matches).
func CommitKind(message string) string {
	subject, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	for _, k := range kindWords {
		if k.re.MatchString(subject) {
			return k.kind
		}
	}
	return "other"
}

// BuildFromHistory makes one case per non-merge commit of rangeSpec
// (git rev-list arguments, split at spaces: "v1..main", "-n200 main")
// in the repository rp, named name (OWNER/NAME):
// query = the commit message, base_commit = its parent, ground truth =
// its diff. Commits the filter rejects, root commits and commits that
// change no file existing at the parent are skipped and counted.
func BuildFromHistory(ctx context.Context, rp *repo.Repo, name, rangeSpec string, f HistoryFilter) (cases []Case, problems []Problem, skipped int, err error) {
	revs, err := repo.RevListArgs(rangeSpec)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("loc build: --commits: %w", err)
	}
	commits, err := rp.RevList(ctx, revs, repo.RevListOptions{Reverse: true, NoMerges: true})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("loc build: commits %s: %w", rangeSpec, err)
	}
	p := symbols.NewParser()
	defer p.Close()
	kinds := map[string]bool{}
	for _, k := range f.Kinds {
		kinds[k] = true
	}
	for _, commit := range commits {
		if err := ctx.Err(); err != nil {
			return cases, problems, skipped, err
		}
		id := name + "@" + commit[:12]
		fail := func(err error) { problems = append(problems, Problem{ID: id, Err: err.Error()}) }
		msg, err := rp.Message(ctx, commit)
		if err != nil {
			fail(err)
			continue
		}
		kind := CommitKind(msg)
		if len(kinds) > 0 && !kinds[kind] {
			skipped++
			continue
		}
		parent, err := rp.ResolveCommit(ctx, commit+"^")
		if err != nil {
			skipped++ // a root commit: nothing to localize in
			continue
		}
		stat, err := rp.NumStat(ctx, parent, commit, repo.DiffOptions{Renames: true})
		if err != nil {
			fail(err)
			continue
		}
		files, lines := numstat(stat)
		if (f.MaxFiles > 0 && files > f.MaxFiles) || (f.MaxLines > 0 && lines > f.MaxLines) || lines < f.MinLines {
			skipped++
			continue
		}
		diff, err := rp.Diff(ctx, parent, commit, repo.DiffOptions{Renames: true})
		if err != nil {
			fail(err)
			continue
		}
		gt, err := TruthFromDiff(ctx, rp, parent, string(diff), p)
		if err != nil {
			skipped++ // only new files, or binary ones
			continue
		}
		cases = append(cases, Case{
			ID: id, Repo: name, BaseCommit: parent, Query: strings.TrimSpace(msg),
			GroundTruth: gt, Category: kind, Source: "git:" + rangeSpec,
		})
	}
	return cases, problems, skipped, nil
}

// numstat totals git diff --numstat: files and changed lines (binary
// files count as files only).
func numstat(stats []repo.FileStat) (files, lines int) {
	for _, st := range stats {
		files++
		lines += st.Added + st.Removed
	}
	return files, lines
}
