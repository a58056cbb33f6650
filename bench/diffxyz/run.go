package diffxyz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/cache"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// Files of a run directory.
const (
	ResultsFile = "results.jsonl"
	RunFile     = "run.json"
)

// Options configure a run.
type Options struct {
	// Dataset is the dataset path; it is loaded unless Rows is set, and
	// recorded in run.json either way.
	Dataset string
	// Rows, when set, are the dataset (already read; Run prepares them).
	Rows []*Row

	// Tasks, Formats and Prompts select the cases; nil means every task,
	// the paper's formats (PaperFormats), and the with-format prompt.
	Tasks   []Task
	Formats []patch.Format
	Prompts []string
	// PromptDir holds templates that override the embedded ones (see
	// [LoadPrompts]).
	PromptDir string

	// ModelOptions name the model and how to call it: client options
	// (base URL, rate limits, retries, per-attempt timeout, price), a
	// client of the caller's own, and the response cache file ("" means
	// Out/cache.db, runner.CacheOff none). Run sets Dir and the oracle of
	// the reference model.
	runner.ModelOptions
	// Sampling parameters sent with every request. A nil Temperature
	// means 0, greedy decoding, as the paper evaluates; MaxTokens 0 and a
	// nil Seed leave the provider's defaults.
	Temperature *float64
	MaxTokens   int
	Seed        *int64

	// Out is the run directory: results.jsonl, run.json, report.json,
	// report.md and, by default, the response cache.
	Out string
	// Force discards an existing results file, so that the run starts
	// over (and is answered from the cache where it can).
	Force bool
	// Session, when set, is the run's hold on Out that the caller took
	// (see runner.Session); without it Run makes one from Out, Force and
	// Runner, and the runner locks Out for the length of the run.
	Session *runner.Session

	// Runner holds the runner's options: workers, per-case timeout,
	// limit, shuffle and seed, fail-fast, dry run, resume, shard,
	// progress. Its Out is set by Run.
	Runner runner.Options
}

// RunInfo is run.json: what a run was asked to do. It never holds
// credentials.
type RunInfo struct {
	Benchmark string `json:"benchmark"`
	Dataset   string `json:"dataset"`
	// DatasetSHA256 identifies the dataset by its bytes (see
	// runner.HashFiles): a resume of another dataset is refused, one of
	// the same dataset moved elsewhere is not.
	DatasetSHA256 string   `json:"dataset_sha256,omitempty"`
	Model         string   `json:"model"`
	Tasks         []Task   `json:"tasks"`
	Formats       []string `json:"formats"`
	Prompts       []string `json:"prompts"`
	PromptDir     string   `json:"prompt_dir,omitempty"`
	// PromptsSHA256 identifies the prompt templates by their text
	// (Prompts.SHA256): a resume or merge of runs asked with other
	// prompts is refused, one whose prompt directory moved is not.
	PromptsSHA256 string   `json:"prompt_dir_sha256,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	MaxTokens     int      `json:"max_tokens,omitempty"`
	Seed          *int64   `json:"seed,omitempty"`
	// Limit, Shuffle and ShuffleSeed choose the run's cases; Shard is
	// the part of them this directory holds ("" for all; see
	// runner.Shard).
	Limit       int    `json:"limit,omitempty"`
	Shuffle     bool   `json:"shuffle,omitempty"`
	ShuffleSeed int64  `json:"shuffle_seed,omitempty"`
	Shard       string `json:"shard,omitempty"`
	Started     string `json:"started"`
}

// Summary says what a run did.
type Summary struct {
	runner.Summary
	// Rows is the number of rows in the results file after the run, and
	// FailedRows the number of them that failed (earlier runs included,
	// when resuming).
	Rows, FailedRows int
	// Cache counts the response cache's hits and misses; zero without a
	// cache.
	Cache cache.Stats
	// Report is the report written, nil for a dry run.
	Report *Report
	// BadRows are the dataset rows left out of the run, with why.
	BadRows []RowError
}

// Result is the row a case adds to results.jsonl, beside the runner's key,
// id, failed, error and elapsed_ms. Scores are missing (null) where they
// do not apply: the diffgen-only ones for apply and anti-apply, and all of
// them in failed rows.
type Result struct {
	Task      Task   `json:"task"`
	Format    string `json:"format"`
	Prompt    string `json:"prompt"`
	Model     string `json:"model"`
	Lang      string `json:"lang"`
	SizeClass string `json:"size_class"`
	// ChangeKind is the row's change kind (add+delete, add-only,
	// delete-only).
	ChangeKind string `json:"change_kind,omitempty"`
	// Response is the model's answer; missing when the call failed.
	Response *string `json:"response,omitempty"`

	// The paper's scores (see Definitions).
	EM      *float64 `json:"em,omitempty"`
	IoU     *float64 `json:"iou,omitempty"`
	Parsed  *bool    `json:"parsed,omitempty"`
	Applied *bool    `json:"applied,omitempty"`
	F1Plus  *float64 `json:"f1_plus,omitempty"`
	F1Minus *float64 `json:"f1_minus,omitempty"`
	// The same diffgen response read by the tolerant engine.
	AppliedTolerant *bool    `json:"applied_tolerant,omitempty"`
	EMTolerant      *float64 `json:"em_tolerant,omitempty"`
	IoUTolerant     *float64 `json:"iou_tolerant,omitempty"`
	F1PlusTolerant  *float64 `json:"f1_plus_tolerant,omitempty"`
	F1MinusTolerant *float64 `json:"f1_minus_tolerant,omitempty"`
	ApplyError      string   `json:"apply_error,omitempty"`
	// NotApplicable says why the case's format cannot express its row's
	// edit; such a case asks no model and has no scores.
	NotApplicable string `json:"not_applicable,omitempty"`

	// ModelCalls holds latency_ms, tokens, cost and cached (the response
	// came from the cache: nothing was sent and nothing paid this time),
	// and makes Result a runner.Result.
	runner.ModelCalls
}

// setScore fills in the scores of r from s.
func (r *Result) setScore(s Score) {
	r.EM, r.IoU = &s.EM, &s.IoU
	r.Parsed, r.Applied, r.F1Plus, r.F1Minus = s.Parsed, s.Applied, s.F1Plus, s.F1Minus
	r.AppliedTolerant, r.EMTolerant, r.IoUTolerant = s.AppliedTolerant, s.EMTolerant, s.IoUTolerant
	r.F1PlusTolerant, r.F1MinusTolerant = s.F1PlusTolerant, s.F1MinusTolerant
	r.ApplyError = s.ApplyError
}

// Run runs the cases of a Diff-XYZ evaluation into o.Out and writes its
// report. Cases that fail are recorded as failed rows and counted in the
// Summary; Run returns an error for invalid options or input, for a results
// file it cannot use, and when ctx is cancelled or fail-fast stops the run
// (the report of what finished is written all the same).
func Run(ctx context.Context, o Options) (Summary, error) {
	var sum Summary
	if o.Model == "" {
		return sum, errors.New("diffxyz: no model given")
	}
	if o.Out == "" && !o.Runner.DryRun {
		return sum, errors.New("diffxyz: no output directory given")
	}
	if o.Temperature == nil {
		greedy := 0.0
		o.Temperature = &greedy
	}
	if o.Tasks == nil {
		o.Tasks = Tasks
	}
	if o.Formats == nil {
		o.Formats = PaperFormats
	}
	if o.Prompts == nil {
		o.Prompts = []string{WithFormat}
	}
	prompts, err := LoadPrompts(o.PromptDir)
	if err != nil {
		return sum, fmt.Errorf("diffxyz: %w", err)
	}
	for _, p := range o.Prompts {
		if !prompts.Has(p) {
			return sum, fmt.Errorf("diffxyz: unknown prompt variant %q (have %v)", p, prompts.Variants())
		}
	}
	// The rows go to a file beside the results as they are read; a case
	// reads its row back when it is due (see rowStore).
	spillDir := o.Out
	if o.Runner.DryRun || o.Out == "" {
		spillDir = ""
	} else if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return sum, fmt.Errorf("diffxyz: %w", err)
	}
	store, rows, badRows, err := spillRows(o, spillDir, 2*max(o.Runner.Workers, 1)+4)
	if err != nil {
		return sum, err
	}
	defer store.close()
	sum.BadRows = badRows
	if len(rows) == 0 {
		return sum, fmt.Errorf("diffxyz: %w: the dataset has no usable rows", ErrDataset)
	}
	rcases := &caseList{rows: rows, tasks: o.Tasks, formats: o.Formats, prompts: o.Prompts}
	ropts := o.Runner
	ropts.Out = filepath.Join(o.Out, ResultsFile)
	if ropts.DryRun {
		if o.Out == "" {
			ropts.Out = ""
		}
		s, err := runner.RunList(ctx, rcases, nil, ropts)
		sum.Summary = s
		return sum, err
	}

	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return sum, fmt.Errorf("diffxyz: %w", err)
	}
	datasetHash, err := runner.HashFiles(o.Dataset)
	if err != nil && o.Rows == nil {
		return sum, fmt.Errorf("diffxyz: %w: %w", ErrDataset, err)
	}
	info := RunInfo{
		Dataset: absPath(o.Dataset), DatasetSHA256: datasetHash, Model: o.Model, Tasks: o.Tasks, Prompts: o.Prompts,
		PromptDir: absPath(o.PromptDir), PromptsSHA256: prompts.SHA256(), Temperature: o.Temperature, MaxTokens: o.MaxTokens, Seed: o.Seed,
		Benchmark: "diffxyz", Limit: ropts.Limit, Shuffle: ropts.Shuffle, ShuffleSeed: ropts.Seed, Shard: ropts.Shard.String(),
		Started: time.Now().UTC().Format(time.RFC3339),
	}
	for _, f := range o.Formats {
		info.Formats = append(info.Formats, string(f))
	}

	mo := o.ModelOptions
	mo.Dir = o.Out
	// The reference model answers the cases in flight.
	var inFlight sync.Map // metaKey → Case with its row
	mo.LLM.Oracle = func(ctx context.Context, req llm.Request) (string, error) {
		c, ok := inFlight.Load(metaKey(req.Meta))
		if !ok {
			return "", fmt.Errorf("no case %q", metaKey(req.Meta))
		}
		return c.(Case).Reference(), nil
	}
	model, err := runner.OpenModel(ctx, mo)
	if err != nil {
		return sum, fmt.Errorf("diffxyz: %w", err)
	}
	defer model.Close()
	// run.json is written once the options are known to work, before the
	// first row, so that score can always find the dataset of a results
	// file.
	sess := o.Session
	if sess == nil {
		sess = runner.NewSession(runner.SessionOptions{Out: o.Out, ResultsFile: ResultsFile, Resume: ropts.Resume, Force: o.Force})
	}
	sess.MayChange = resumeMayChange
	if err := sess.Record(info); err != nil {
		return sum, fmt.Errorf("diffxyz: %w", err)
	}

	fn := func(ctx context.Context, rc runner.Case) (runner.Result, error) {
		ci := rc.Data.(caseRef)
		c := ci.Case
		res := &Result{Task: c.Task, Format: string(c.Format), Prompt: c.Prompt, Model: o.Model, Lang: c.Row.Lang, SizeClass: c.Row.SizeClass,
			ChangeKind: c.Row.ChangeKind}
		stored, release, err := store.get(ci.row)
		if err != nil {
			return res, err
		}
		defer release()
		c.Row = stored.row
		if why := stored.format(c.Format); why != "" {
			res.NotApplicable = why
			return res, nil
		}
		inFlight.Store(metaKey(c.Meta()), c)
		defer inFlight.Delete(metaKey(c.Meta()))
		system, user, err := prompts.Render(c)
		if err != nil {
			return res, err
		}
		req := llm.Request{
			Model: o.Model, System: system, Messages: []llm.Message{{Role: "user", Content: user}},
			Temperature: o.Temperature, MaxTokens: o.MaxTokens, Seed: o.Seed, Meta: c.Meta(),
		}
		resp, err := model.Recording(&res.ModelCalls).Complete(ctx, req)
		if err != nil {
			return res, err
		}
		res.Response = &resp.Text
		res.setScore(ScoreResponse(c, resp.Text))
		return res, nil
	}
	s, runErr := runner.RunList(ctx, rcases, fn, ropts)
	sum.Summary = s
	sum.Cache = model.CacheStats()
	if _, err := os.Stat(ropts.Out); errors.Is(err, fs.ErrNotExist) {
		return sum, runErr // the run stopped before its first row
	}
	rep, nrows, nfailed, err := WriteReport(o.Out)
	sum.Report, sum.Rows, sum.FailedRows = rep, nrows, nfailed
	return sum, errors.Join(runErr, err)
}

// Benchmark is Diff-XYZ as merge, report and the HTML page know it.
func Benchmark() *runner.Benchmark {
	return &runner.Benchmark{
		Name: "diffxyz", ResultsFile: ResultsFile, Row: &Result{}, Page: Page(),
		WriteReport: func(dir, _ string, _ map[string]any) error {
			_, _, _, err := WriteReport(dir)
			return err
		},
	}
}

// caseList makes a run's cases (rows × tasks × formats × prompts, row by
// row, as [Cases] lists them) when the runner asks, so that a run of
// 150,000 cases does not hold them.
type caseList struct {
	rows    []*Row // stubs, without code
	tasks   []Task
	formats []patch.Format
	prompts []string
}

// caseRef is a case with the number of its row in the run's rowStore.
type caseRef struct {
	Case
	row int
}

func (l *caseList) Len() int {
	return len(l.rows) * len(l.tasks) * len(l.formats) * len(l.prompts)
}

func (l *caseList) Case(i int) runner.Case {
	np, nf, nt := len(l.prompts), len(l.formats), len(l.tasks)
	p := i % np
	i /= np
	f := i % nf
	i /= nf
	t := i % nt
	r := i / nt
	c := Case{Row: l.rows[r], Task: l.tasks[t], Format: l.formats[f], Prompt: l.prompts[p]}
	return runner.Case{ID: c.Row.ID, Key: c.Key(), Data: caseRef{c, r}}
}

// resumeMayChange are the run.json fields a resume may change: paths
// (the dataset and the prompts are compared by their hashes,
// dataset_sha256 and prompt_dir_sha256).
var resumeMayChange = []string{"dataset", "prompt_dir"}

// ReadRunInfo reads run.json of the run directory dir.
func ReadRunInfo(dir string) (*RunInfo, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, fmt.Errorf("diffxyz: %w", err)
	}
	var info RunInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("diffxyz: %s: %w", filepath.Join(dir, RunFile), err)
	}
	return &info, nil
}

func metaKey(m map[string]string) string {
	return m["id"] + "|" + m["task"] + "|" + m["format"] + "|" + m["prompt"]
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// writeJSONFile writes v as indented JSON to path, atomically.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("diffxyz: encoding %s: %w", filepath.Base(path), err)
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// writeFileAtomic writes a run file so that readers never see a part.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("diffxyz: writing %s: %w", path, err)
	}
	return nil
}
