package loc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/patchbench/patchbench/codesearch"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

// ResultsFile is the results file of a run directory.
const ResultsFile = "results.jsonl"

// ErrNoGroundTruth is why a case without ground truth (an empty or null
// ground_truth, or relace-mcp's hard_gt with no usable entry) is not
// scored.
var ErrNoGroundTruth = errors.New("no ground truth (empty or null ground_truth / hard_gt): not scored")

// RunOptions configure [Run].
type RunOptions struct {
	Cases   []Case
	Dataset string // for the report
	// Repos is the --repos directory; CloneFrom where missing repositories
	// are cloned from (empty: none is cloned, a missing one fails its
	// cases).
	Repos, CloneFrom string
	// Out is the run directory: results.jsonl, report.json, report.md.
	Out  string
	Mode string // ModeIndexed or ModeAgentic
	// Model is "reference", "replay/FILE", or a model the agentic search
	// asks; empty in indexed mode.
	Model string
	// IndexDir caches the indexed mode's indexes (see [Indexed]).
	IndexDir string
	// Signals are the indexed mode's signals (see [codesearch.ParseSignals]);
	// empty means [codesearch.DefaultSignals].
	Signals string
	// Embed, when its Model is set, adds the dense retriever to the
	// indexed search: the embedding model (openai/NAME) and its vector
	// cache file (see runner.OpenEmbedder).
	Embed runner.ModelOptions
	// MaxTurns and Temperature configure the agentic search (loc grid
	// varies them); ModelOptions is its model-call path.
	MaxTurns     int
	Temperature  *float64
	ModelOptions runner.ModelOptions
	// Agentic builds the agentic searcher for these options; the command
	// line sets it (package loc does not know the agent).
	Agentic func(ctx context.Context, o RunOptions) (Searcher, func() error, error)
	Runner  runner.Options
	// Force discards an existing results file first.
	Force bool
	// Session, when set, is the run's hold on Out that the caller took
	// (see runner.Session); without it Run makes one from Out, Force and
	// Runner, and the runner locks Out for the length of the run.
	Session *runner.Session
}

// RunSummary is what [Run] did.
type RunSummary struct {
	runner.Summary
	Report           *Report
	Rows, FailedRows int
	// Index counts the indexes built and loaded (indexed mode).
	Index *codesearch.IndexStats
}

// Searcher returns the searcher the options select, and a function that
// releases it.
func (o RunOptions) searcher(ctx context.Context) (Searcher, func() error, error) {
	nop := func() error { return nil }
	switch {
	case o.Model == "reference":
		return Reference{}, nop, nil
	case strings.HasPrefix(o.Model, "replay/"):
		r, err := LoadReplay(strings.TrimPrefix(o.Model, "replay/"))
		return r, nop, err
	case o.Mode == ModeIndexed:
		if o.Model != "" {
			return nil, nil, fmt.Errorf("indexed mode asks no model; got --model %s", o.Model)
		}
		ix := NewIndexed(o.IndexDir)
		if o.Signals != "" {
			on, err := codesearch.ParseSignals(o.Signals)
			if err != nil {
				return nil, nil, err
			}
			ix.Signals = on
		}
		if o.Embed.Model == "" || o.Runner.DryRun {
			return ix, nop, nil
		}
		e, err := runner.OpenEmbedder(ctx, o.Embed)
		if err != nil {
			return nil, nil, err
		}
		ix.Dense = &codesearch.Dense{Embed: e}
		return ix, e.Close, nil
	case o.Mode == ModeAgentic:
		if o.Agentic == nil {
			return nil, nil, errors.New("agentic mode is not available in this build")
		}
		return o.Agentic(ctx, o)
	}
	return nil, nil, fmt.Errorf("unknown mode %q (want indexed or agentic)", o.Mode)
}

// RunInfo is run.json (runner.RunFile): what a run was asked to do, which
// merge compares between the shards of one run. It never holds credentials.
type RunInfo struct {
	Benchmark string `json:"benchmark"` // "loc"
	Dataset   string `json:"dataset"`
	// DatasetSHA256 is the hash of the dataset's bytes (runner.HashFiles).
	DatasetSHA256 string   `json:"dataset_sha256,omitempty"`
	Mode          string   `json:"mode"`
	Model         string   `json:"model,omitempty"`
	Signals       string   `json:"signals,omitempty"`
	EmbedModel    string   `json:"embed_model,omitempty"`
	MaxTurns      int      `json:"max_turns,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	Limit         int      `json:"limit,omitempty"`
	Shuffle       bool     `json:"shuffle,omitempty"`
	ShuffleSeed   int64    `json:"shuffle_seed,omitempty"`
	Shard         string   `json:"shard,omitempty"`
}

// Benchmark is Loc-Bench as merge, report and the HTML page know it.
func Benchmark() *runner.Benchmark {
	return &runner.Benchmark{
		Name: "loc", ResultsFile: ResultsFile, Row: &Result{}, Page: Page(),
		WriteReport: func(dir, _ string, info map[string]any) error {
			dataset, _ := info["dataset"].(string)
			_, _, _, err := WriteReport(dir, dataset)
			return err
		},
	}
}

// Run searches every selected case, appends one scored row per case to
// Out/results.jsonl and writes Out/report.json and Out/report.md. A case
// whose repository or base_commit is missing, or whose search fails, is
// a failed row naming the case; the others go on.
func Run(ctx context.Context, o RunOptions) (RunSummary, error) {
	if !o.Runner.DryRun {
		// The searcher may open files in the run directory (the agentic
		// mode's response cache, DIR/cache.db by default).
		if err := os.MkdirAll(o.Out, 0o777); err != nil {
			return RunSummary{}, fmt.Errorf("loc run: %w", err)
		}
	}
	cases := make([]runner.Case, len(o.Cases))
	for i, c := range o.Cases {
		cases[i] = runner.Case{ID: c.ID, Key: c.ID, Data: c}
	}
	ropts := o.Runner
	ropts.Out = filepath.Join(o.Out, ResultsFile)
	if ropts.DryRun && o.Mode == ModeAgentic {
		// The agentic searcher opens the model (its key, its cache file
		// in Out); a dry run asks nothing and makes nothing.
		sum, err := runner.Plan(cases, ropts)
		return RunSummary{Summary: sum}, err
	}
	s, release, err := o.searcher(ctx)
	if err != nil {
		return RunSummary{}, fmt.Errorf("loc run: %w", err)
	}
	defer release()
	if ropts.DryRun {
		sum, err := runner.Plan(cases, ropts)
		return RunSummary{Summary: sum}, err
	}
	datasetHash, err := runner.HashFiles(o.Dataset)
	if err != nil {
		return RunSummary{}, fmt.Errorf("loc run: %w", err)
	}
	info := RunInfo{Benchmark: "loc", Dataset: o.Dataset, DatasetSHA256: datasetHash, Mode: o.Mode, Model: o.Model,
		Limit: ropts.Limit, Shuffle: ropts.Shuffle, Shard: ropts.Shard.String()}
	if o.Mode == ModeIndexed && o.Signals != "all" {
		info.Signals = o.Signals
	}
	if o.Mode == ModeIndexed {
		info.EmbedModel = o.Embed.Model
	}
	if o.Mode == ModeAgentic {
		info.MaxTurns, info.Temperature = o.MaxTurns, o.Temperature
	}
	if ropts.Shuffle {
		info.ShuffleSeed = ropts.Seed
	}
	// A resume must be of the same run; the dataset is compared by its
	// bytes, not its path.
	sess := o.Session
	if sess == nil {
		sess = runner.NewSession(runner.SessionOptions{Out: o.Out, ResultsFile: ResultsFile, Resume: ropts.Resume, Force: o.Force})
	}
	sess.MayChange = []string{"dataset"}
	if err := sess.Record(info); err != nil {
		return RunSummary{}, fmt.Errorf("loc run: %w", err)
	}
	store := repo.NewStore(o.Repos)
	store.BaseURL, store.NoClone = o.CloneFrom, o.CloneFrom == ""
	defer store.Close()
	model := o.Model
	fn := func(ctx context.Context, rc runner.Case) (runner.Result, error) {
		c := rc.Data.(Case)
		res := &Result{Repo: c.Repo, Category: c.Category, Mode: o.Mode, Model: model}
		if len(c.GroundTruth.Files) == 0 {
			// Nothing to score against: every metric would be a convention
			// (file recall 1), so the case is named, not scored.
			res.Unscored = ErrNoGroundTruth.Error()
			return res, nil
		}
		rp, err := store.Get(ctx, c.Repo)
		if err != nil {
			return res, err
		}
		if _, err := rp.ResolveCommit(ctx, c.BaseCommit); err != nil {
			return res, fmt.Errorf("base_commit %s: %w", c.BaseCommit, err)
		}
		start := time.Now()
		ans, err := s.Search(ctx, c, rp, &res.ModelCalls)
		res.SearchMS = time.Since(start).Milliseconds()
		res.Found = Complete(ans.Found)
		res.Turns, res.NoAnswer = ans.Turns, ans.NoAnswer
		if err != nil {
			return res, err
		}
		res.Metrics = Score(c.GroundTruth, res.Found)
		return res, nil
	}
	sum, runErr := runner.Run(ctx, cases, fn, ropts)
	out := RunSummary{Summary: sum}
	if ix, ok := s.(*Indexed); ok {
		st := ix.Stats()
		out.Index = &st
	}
	rep, rows, failed, err := WriteReport(o.Out, o.Dataset)
	if err != nil {
		return out, errors.Join(runErr, err)
	}
	out.Report, out.Rows, out.FailedRows = rep, rows, failed
	return out, runErr
}
