package swe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/sandbox"
)

// Config is a run's settings. It is saved as run.json in the run directory,
// so that "swe rerun" evaluates with the same inputs.
type Config struct {
	Dataset string `json:"dataset"`
	// Predictions is the predictions file, or GoldPredictions.
	Predictions string `json:"predictions"`
	// DatasetSHA256 and PredictionsSHA256 identify the inputs by their
	// bytes (runner.HashFiles), so a resume of other inputs is refused.
	DatasetSHA256     string `json:"dataset_sha256,omitempty"`
	PredictionsSHA256 string `json:"predictions_sha256,omitempty"`
	// Repos is the --repos directory (see repo.Store); CloneFrom is where
	// missing repositories are cloned from (empty: GitHub).
	Repos     string `json:"repos"`
	CloneFrom string `json:"clone_from,omitempty"`
	RunID     string `json:"run_id"`
	Out       string `json:"out"`
	// Workers is the number of instances evaluated at once; zero means
	// DefaultPatchWorkers with NoTests (the patch stage mostly waits on
	// git's pipes and on syncing results.jsonl, not on the CPU) and the
	// number of CPUs with tests.
	Workers int  `json:"workers"`
	NoTests bool `json:"no_tests"`
	// Sandbox is auto, bwrap, docker or none (see [NewSandbox]).
	Sandbox string `json:"sandbox,omitempty"`
	TestCmd string `json:"test_cmd,omitempty"`
	// SpecFile holds test specs per repository and version (see [Spec]),
	// tried before TestCmd and the built-in specs.
	SpecFile string `json:"spec,omitempty"`
	// NoBuiltinSpecs turns the built-in specs off.
	NoBuiltinSpecs bool          `json:"no_builtin_specs,omitempty"`
	Image          string        `json:"image,omitempty"`
	Timeout        time.Duration `json:"timeout,omitempty"`
	Env            []string      `json:"env,omitempty"`
	Writable       []string      `json:"writable,omitempty"`
	// ReadOnly lists host paths the test command may read besides the
	// system directories (see package sandbox).
	ReadOnly []string `json:"read_only,omitempty"`
	// Memory limits the test command's address space in bytes; zero means
	// no limit.
	Memory  uint64 `json:"memory,omitempty"`
	WorkDir string `json:"work_dir,omitempty"`
	// EnvStore is an environment store (package envstore): the test stage
	// restores the base commit's environment from it instead of making a
	// fresh worktree.
	EnvStore string `json:"env_store,omitempty"`

	// Apply is the patch stage's applier: ApplyTolerant (""), ApplyOfficial
	// or ApplyGit.
	Apply string `json:"apply,omitempty"`
	// ReportDir, when set, receives a copy of the official harness's
	// summary report (its --report_dir).
	ReportDir string `json:"report_dir,omitempty"`

	// InstanceIDs, when set, are the only instances evaluated (the
	// official harness's --instance_ids); each must be in the dataset.
	InstanceIDs []string `json:"instance_ids,omitempty"`

	// Shard is the part of the instances this run evaluates ("i/n"; ""
	// for all; see runner.Shard).
	Shard string `json:"shard,omitempty"`

	// Resume continues an interrupted run in Out.
	Resume bool `json:"-"`
	// Progress says where progress goes.
	Progress runner.Progress `json:"-"`
	// Log receives notes such as the sandbox chosen; nil discards them.
	Log io.Writer `json:"-"`
}

// GoldPredictions, given as Config.Predictions, evaluates the dataset's own
// gold patches (model "gold"), as SWE-bench's harness does, to check the
// repositories and the test commands.
const GoldPredictions = "gold"

// DefaultPatchWorkers is the number of workers of a run without tests when
// Config.Workers is zero.
const DefaultPatchWorkers = 32

// workers returns the number of workers to use.
func (c *Config) workers() int {
	switch {
	case c.Workers > 0:
		return c.Workers
	case c.NoTests:
		return DefaultPatchWorkers
	}
	return runtime.NumCPU()
}

// DefaultTimeout is the test command's timeout when Config.Timeout is zero,
// as in SWE-bench's harness.
const DefaultTimeout = 30 * time.Minute

// Summary is what a run or a rerun did.
type Summary struct {
	// Counts maps each status to its number of instances; Before holds the
	// counts before a rerun.
	Counts, Before map[string]int
	// Instances is the number of instances in the run.
	Instances int
	// Evaluated is the number of instances evaluated by this call.
	Evaluated int
	// Sandbox names the test runner used, empty with NoTests.
	Sandbox string
	// Infra is the number of instances whose status is an infrastructure
	// failure.
	Infra int
	// RerunReport is the rerun's comparison file (rerun-TIME.json, with
	// its .md beside it) in the run directory.
	RerunReport string
}

// abs makes the run's paths absolute, so run.json works from anywhere.
func (c *Config) abs() error {
	for _, p := range []*string{&c.Dataset, &c.Predictions, &c.Repos, &c.Out, &c.WorkDir, &c.SpecFile, &c.EnvStore, &c.ReportDir} {
		if *p == "" || *p == GoldPredictions && p == &c.Predictions {
			continue
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	for _, list := range [][]string{c.Writable, c.ReadOnly} {
		for i, p := range list {
			a, err := filepath.Abs(p)
			if err != nil {
				return err
			}
			list[i] = a
		}
	}
	if c.CloneFrom != "" && !strings.Contains(c.CloneFrom, "://") {
		if a, err := filepath.Abs(c.CloneFrom); err == nil {
			if _, serr := os.Stat(a); serr == nil {
				c.CloneFrom = a
			}
		}
	}
	return nil
}

func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format, args...)
	}
}

// inputs are the loaded dataset and predictions.
type inputs struct {
	dataset   []Instance
	byID      map[string]Instance
	preds     []Prediction
	predsByID map[string]Prediction
	// selected holds the --instance-ids (nil without them) and submitted
	// the ids of every prediction for a dataset instance, selected or not:
	// the official harness's run report counts the selected instances as
	// its dataset and every prediction of the file as submitted.
	selected  map[string]bool
	submitted []string
}

func loadInputs(c *Config) (*inputs, error) {
	// A bad row is left out, named on the log; the others run.
	ds, bad, err := ReadDataset(c.Dataset)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	for _, b := range bad {
		c.logf("warning: left out: %v\n", b)
	}
	if len(ds) == 0 {
		return nil, inputErr("the dataset %s has no usable rows", c.Dataset)
	}
	var preds []Prediction
	if c.Predictions == GoldPredictions {
		for _, inst := range ds {
			p := inst.Patch
			preds = append(preds, Prediction{InstanceID: inst.InstanceID, Model: GoldPredictions, ModelPatch: &p})
		}
	} else {
		if preds, bad, err = ReadPredictions(c.Predictions); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInput, err)
		}
		for _, b := range bad {
			if errors.Is(b, ErrDuplicatePrediction) {
				return nil, fmt.Errorf("%w: %w", ErrInput, b)
			}
		}
		for _, b := range bad {
			c.logf("warning: left out: %v\n", b)
		}
	}
	in := &inputs{dataset: ds, preds: preds, byID: map[string]Instance{}, predsByID: map[string]Prediction{}}
	for _, inst := range ds {
		in.byID[inst.InstanceID] = inst
	}
	for _, p := range preds {
		if _, ok := in.byID[p.InstanceID]; ok {
			in.submitted = append(in.submitted, p.InstanceID)
		}
	}
	if len(c.InstanceIDs) > 0 {
		if preds, err = in.selectIDs(c); err != nil {
			return nil, err
		}
		in.selected = map[string]bool{}
		for _, id := range c.InstanceIDs {
			in.selected[id] = true
		}
	}
	var missing []string
	kept := preds[:0]
	for _, p := range preds {
		if _, ok := in.byID[p.InstanceID]; !ok {
			missing = append(missing, p.InstanceID)
			continue
		}
		in.predsByID[p.InstanceID] = p
		kept = append(kept, p)
	}
	in.preds = kept
	if len(missing) > 0 {
		c.logf("warning: left out %d predictions for instances not in the dataset %s (or left out of it): %s\n", len(missing), c.Dataset, listSome(missing))
	}
	if len(kept) == 0 {
		return nil, inputErr("no prediction is for an instance of the dataset %s", c.Dataset)
	}
	return in, nil
}

// selectIDs keeps the predictions of c.InstanceIDs, as the official
// harness's --instance_ids does: an id not in the dataset is an input
// error naming every such id; an id without a prediction is a warning.
func (in *inputs) selectIDs(c *Config) ([]Prediction, error) {
	want := map[string]bool{}
	var unknown []string
	for _, id := range c.InstanceIDs {
		if _, ok := in.byID[id]; !ok {
			unknown = append(unknown, id)
		}
		want[id] = true
	}
	if len(unknown) > 0 {
		return nil, inputErr("--instance-ids: %d not in the dataset %s: %s", len(unknown), c.Dataset, strings.Join(unknown, ", "))
	}
	var kept []Prediction
	have := map[string]bool{}
	for _, p := range in.preds {
		if want[p.InstanceID] {
			kept = append(kept, p)
			have[p.InstanceID] = true
		}
	}
	var noPred []string
	for _, id := range c.InstanceIDs {
		if !have[id] {
			noPred = append(noPred, id)
		}
	}
	if len(noPred) > 0 {
		c.logf("warning: --instance-ids: %d have no prediction: %s\n", len(noPred), listSome(noPred))
	}
	return kept, nil
}

// cases turns predictions into runner cases, keyed by instance id.
func (in *inputs) cases(ids map[string]bool) []runner.Case {
	var cs []runner.Case
	for _, p := range in.preds {
		if ids != nil && !ids[p.InstanceID] {
			continue
		}
		cs = append(cs, runner.Case{ID: p.InstanceID, Key: p.InstanceID, Data: p})
	}
	return cs
}

// NewSandbox returns the test runner named by kind: "bwrap" (bubblewrap,
// an error if it does not work here), "docker" (an error unless an engine
// answers), "none" (unsandboxed), or "auto" / "" (bubblewrap if it works,
// else Docker if image is set and an engine answers, else unsandboxed).
func NewSandbox(ctx context.Context, kind, image string) (sandbox.Runner, error) {
	switch kind {
	case "bwrap":
		if image == OfficialImage {
			return nil, inputErr("--image %s runs the tests in the official images: it needs --sandbox docker (or auto)", OfficialImage)
		}
		return sandbox.NewBwrap(ctx)
	case "docker":
		if image == "" {
			return nil, inputErr("--sandbox docker needs --image")
		}
		return sandbox.NewDocker(ctx)
	case "none":
		if image == OfficialImage {
			return nil, inputErr("--image %s runs the tests in the official images: it needs --sandbox docker (or auto)", OfficialImage)
		}
		return sandbox.Plain{}, nil
	case "auto", "":
		if image == OfficialImage {
			// The official images hold the environment: nothing else will do.
			return sandbox.NewDocker(ctx)
		}
		if b, err := sandbox.NewBwrap(ctx); err == nil {
			return b, nil
		}
		if image != "" {
			if d, err := sandbox.NewDocker(ctx); err == nil {
				return d, nil
			}
		}
		return sandbox.Plain{}, nil
	}
	return nil, inputErr("unknown sandbox %q (want auto, bwrap, docker or none)", kind)
}

// evaluator evaluates single instances.
type evaluator struct {
	cfg   *Config
	in    *inputs
	store *repo.Store
	test  *TestConfig
}

func newEvaluator(ctx context.Context, c *Config, in *inputs) (*evaluator, error) {
	e := &evaluator{cfg: c, in: in}
	if !c.NoTests {
		var specs SpecTable
		if c.SpecFile != "" {
			var err error
			if specs, err = LoadSpecs(c.SpecFile); err != nil {
				return nil, inputErr("--spec: %v", err)
			}
		}
		e.test = &TestConfig{Command: c.TestCmd, Specs: specs, NoBuiltinSpecs: c.NoBuiltinSpecs}
		var missing []string
		for _, p := range in.preds {
			if cmd, _, _ := e.test.testCommand(in.byID[p.InstanceID]); cmd == "" {
				missing = append(missing, p.InstanceID)
			}
		}
		if len(missing) > 0 {
			return nil, inputErr("no test command for %d instances (%s): the dataset rows have no test_cmd and no spec names their repository and version; give --spec, --test-cmd or --no-tests", len(missing), listSome(missing))
		}
		// Checked here, or every instance would fail in the sandbox.
		for _, p := range append(append([]string{}, c.Writable...), c.ReadOnly...) {
			if _, err := os.Stat(p); err != nil {
				return nil, inputErr("--writable or --ro-bind path: %v", err)
			}
		}
		r, err := NewSandbox(ctx, c.Sandbox, c.Image)
		if err != nil {
			return nil, fmt.Errorf("swe: sandbox: %w", err)
		}
		if r.Name() == "unsandboxed" {
			c.logf("warning: bubblewrap is not usable here; tests run unsandboxed\n")
		}
		timeout := c.Timeout
		if timeout == 0 {
			timeout = DefaultTimeout
		}
		e.test.Runner, e.test.Image, e.test.Timeout = r, c.Image, timeout
		e.test.Env, e.test.Writable, e.test.ReadOnly, e.test.WorkDir = c.Env, c.Writable, c.ReadOnly, c.WorkDir
		e.test.Limits = sandbox.Limits{AddressSpace: c.Memory, FileSize: 4 << 30}
		if c.EnvStore != "" {
			if e.test.EnvStore, err = envstore.OpenExisting(c.EnvStore); err != nil {
				return nil, inputErr("%v", err)
			}
			// Overlays a killed run left mounted.
			if _, err := e.test.EnvStore.ReleaseStale(ctx); err != nil {
				return nil, err
			}
		}
	}
	e.store = repo.NewStore(c.Repos)
	e.store.BaseURL = c.CloneFrom
	return e, nil
}

func (e *evaluator) close() { e.store.Close() }

// eval evaluates one instance. It returns an error only when ctx ended, so
// that the runner does not record the instance and a resumed run takes it up.
func (e *evaluator) eval(ctx context.Context, c runner.Case) (runner.Result, error) {
	pred := c.Data.(Prediction)
	inst := e.in.byID[pred.InstanceID]
	res := evaluate(ctx, e, inst, pred)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

func evaluate(ctx context.Context, e *evaluator, inst Instance, pred Prediction) (res Result) {
	res = Result{InstanceID: inst.InstanceID, Repo: inst.Repo, Model: pred.Model, PatchIsNone: pred.ModelPatch == nil, Repairs: []string{}, Files: []FileOutcome{}}
	defer func() { res.SWE4CCClass = SWE4CCClass(res.HarnessStatus, res.HarnessLog+"\n"+res.Reason) }()
	dir := filepath.Join(e.cfg.Out, "instances", SafeID(inst.InstanceID))
	os.Remove(filepath.Join(dir, "test_output.txt"))
	os.Remove(filepath.Join(dir, harnessTestOutput))
	raw := deref(pred.ModelPatch)
	if raw == "" && strings.TrimSpace(pred.FullOutput) == "" {
		// Nothing to read: no repository needed.
		po := Patch(pred, nil)
		res.Status, res.Reason = po.Status, po.Reason
		res.HarnessPatchStatus, res.HarnessStatus = StatusEmptyPatch, StatusEmptyPatch
		return res
	}
	infra := func(err error) Result {
		res.Status, res.Reason = StatusInfraError, err.Error()
		res.HarnessStatus = StatusInfraError
		return res
	}
	r, err := e.store.Get(ctx, inst.Repo)
	if err != nil {
		return infra(err)
	}
	commit, err := r.ResolveCommit(ctx, inst.BaseCommit)
	if err != nil {
		return infra(err)
	}
	fsys := NewBaseFS(ctx, r, commit)
	var po PatchOutcome
	if e.cfg.Apply == "" || e.cfg.Apply == ApplyTolerant {
		po = Patch(pred, fsys)
	}
	// What the official harness does with the raw patch, whatever this
	// run's applier. A patch the tolerant applier classes applied passed
	// patch's strict parse and apply, which accept what git apply accepts
	// and write what it writes: the chain's first command applies it, and
	// is not run.
	var h HarnessApply
	if po.Status == StatusApplied {
		h = HarnessApply{Status: StatusApplied, Command: strings.Join(HarnessChain[0], " "), Results: po.Results,
			Log: LogApplyPatchPass + ":\n(not run: the patch applies as written; patchbench's strict apply, which git apply agrees with, placed every hunk)\n"}
	} else {
		var err error
		h, err = runHarnessChain(ctx, fsys, raw, ApplyOfficial)
		if ctx.Err() != nil {
			return res
		}
		if err != nil {
			return infra(fmt.Errorf("official apply chain: %w", err))
		}
	}
	res.HarnessPatchStatus, res.HarnessStatus, res.HarnessApplyCmd, res.HarnessLog = h.Status, h.Status, h.Command, h.Log
	switch e.cfg.Apply {
	case ApplyOfficial:
		po = harnessOutcome(h, fsys)
	case ApplyGit:
		g, err := runHarnessChain(ctx, fsys, raw, ApplyGit)
		if err != nil {
			return infra(fmt.Errorf("git apply: %w", err))
		}
		po = harnessOutcome(g, fsys)
	}
	if ctx.Err() != nil {
		return res
	}
	if err := fsys.Err(); err != nil {
		return infra(err)
	}
	res.Status, res.Reason, res.Refusal, res.Source, res.Format, res.Extracted = po.Status, po.Reason, po.Kind, po.Source, string(po.Format), po.Extracted
	if po.Repairs != nil {
		res.Repairs = po.Repairs
	}
	if po.Files != nil {
		res.Files = po.Files
	}
	for _, f := range po.Files {
		if f.Created {
			res.CreatedFiles = append(res.CreatedFiles, f.Path)
		}
		if f.Test {
			p := f.Path
			if p == "" {
				p = f.OldPath
			}
			res.TestFiles = append(res.TestFiles, p)
		}
	}
	applied := po.Status == StatusApplied || po.Status == StatusAppliedRepaired || po.Status == StatusAlreadyApplied
	if applied {
		res.PatchStatus, res.RepairedPatch = po.Status, po.Repaired
	}
	if !applied || e.test == nil {
		return res
	}
	to := runTests(ctx, r, commit, inst, po.Results, po.Repaired, e.test)
	res.Status, res.Reason, res.Test = to.status, to.reason, to.run
	if to.log != nil {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			writeAtomic(filepath.Join(dir, "test_output.txt"), to.log, false)
		}
	}
	if h.Status != StatusApplied {
		return res
	}
	if e.cfg.Apply == ApplyOfficial || sameFiles(h.Results, po.Results) {
		res.HarnessStatus = to.harnessStatus()
		return res
	}
	// The chain wrote other files than the applier: the harness's verdict
	// is their tests'.
	hdiff, err := resultsDiff(fsys, h.Results)
	if err != nil {
		res.HarnessStatus = StatusInfraError
		return res
	}
	hto := runTests(ctx, r, commit, inst, h.Results, hdiff, e.test)
	res.HarnessStatus, res.HarnessTest = hto.harnessStatus(), hto.run
	if hto.log != nil {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			writeAtomic(filepath.Join(dir, harnessTestOutput), hto.log, false)
		}
	}
	return res
}

// harnessOutcome turns what an apply chain did into the patch stage's
// outcome: its status, and the files it wrote as the results the test
// stage writes into the tree.
func harnessOutcome(h HarnessApply, fsys patch.FileSystem) PatchOutcome {
	po := PatchOutcome{Status: h.Status, Reason: h.Reason(), Source: "model_patch", Format: patch.UDiff}
	if h.Status != StatusApplied {
		return po
	}
	po.Results = h.Results
	for _, r := range h.Results {
		fo := FileOutcome{FileReport: repair.FileReport{Path: r.Path, OldPath: r.OldPath, Op: r.Op.String(), Status: repair.StatusApplied}}
		fo.Created = r.Op == patch.Create
		fo.Test = IsTestPath(r.Path) || IsTestPath(r.OldPath)
		po.Files = append(po.Files, fo)
	}
	text, err := resultsDiff(fsys, h.Results)
	if err != nil {
		return PatchOutcome{Status: StatusApplyFailed, Reason: fmt.Sprintf("cannot print the applied change: %v", err), Source: "model_patch"}
	}
	po.Repaired = text
	return po
}

// Eval evaluates the predictions of c and writes the run directory c.Out.
// Errors wrapping [ErrInput] are about the inputs; others are about the run.
// Instances whose evaluation failed are counted in the Summary, not errors.
func Eval(ctx context.Context, c Config) (*Summary, error) {
	if err := c.abs(); err != nil {
		return nil, err
	}
	if c.Out == "" || c.Repos == "" || c.Dataset == "" || c.Predictions == "" {
		return nil, inputErr("--dataset, --predictions, --repos and --out are required")
	}
	shard, err := runner.ParseShard(c.Shard)
	if err != nil {
		return nil, inputErr("--shard: %v", err)
	}
	c.Shard = shard.String() // env/N recorded as the shard it named
	switch c.Apply {
	case "", ApplyTolerant, ApplyOfficial, ApplyGit:
	default:
		return nil, inputErr("--apply %q: want tolerant, official or git", c.Apply)
	}
	in, err := loadInputs(&c)
	if err != nil {
		return nil, err
	}
	sess := runner.NewSession(runner.SessionOptions{Out: c.Out, Command: "patchbench swe eval", ResultsFile: "results.jsonl",
		Resume: c.Resume, MayChange: resumeMayChange})
	if err := sess.Check(); err != nil {
		return nil, err
	}
	if c.DatasetSHA256, err = runner.HashFiles(c.Dataset); err != nil {
		return nil, inputErr("--dataset: %v", err)
	}
	if c.Predictions != GoldPredictions {
		if c.PredictionsSHA256, err = runner.HashFiles(c.Predictions); err != nil {
			return nil, inputErr("--predictions: %v", err)
		}
	}
	e, err := newEvaluator(ctx, &c, in)
	if err != nil {
		return nil, err
	}
	defer e.close()
	ro := runner.Options{Workers: c.workers(), Resume: c.Resume, Progress: c.Progress, Shard: shard}
	if err := sess.Open(&ro); err != nil {
		return nil, err
	}
	defer sess.Close()
	if err := sess.Record(c); err != nil {
		return nil, err
	}
	results := ro.Out
	sum, runErr := runner.Run(ctx, in.cases(nil), e.eval, ro)
	s := &Summary{Evaluated: sum.Done}
	if e.test != nil {
		s.Sandbox = e.test.Runner.Name()
	}
	rows, err := ReadResults(results)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, fmt.Errorf("swe: %w", err)
	}
	if err := WriteOutputs(c.Out, c.RunID, in, rows); err != nil {
		return s, err
	}
	if err := copySummary(c, in); err != nil {
		return s, err
	}
	s.Counts, s.Instances, s.Infra = countStatuses(rows)
	if runErr != nil {
		return s, fmt.Errorf("swe: %w", runErr)
	}
	return s, nil
}

// copySummary copies the official harness's summary report of the run
// into c.ReportDir, when set.
func copySummary(c Config, in *inputs) error {
	if c.ReportDir == "" {
		return nil
	}
	name := HarnessSummaryName(harnessModel(in), c.RunID)
	b, err := os.ReadFile(filepath.Join(c.Out, name))
	if err != nil {
		return fmt.Errorf("swe: %w", err)
	}
	if err := os.MkdirAll(c.ReportDir, 0o755); err != nil {
		return fmt.Errorf("swe: --report-dir: %w", err)
	}
	return writeAtomic(filepath.Join(c.ReportDir, name), b, true)
}

func countStatuses(rows []Row) (map[string]int, int, int) {
	m := map[string]int{}
	infra := 0
	for _, r := range rows {
		st := r.FinalStatus()
		m[st]++
		if IsInfra(st) {
			infra++
		}
	}
	return m, len(rows), infra
}

// resumeMayChange are the fields of run.json a resume may change: where
// the inputs and the work lie (the dataset and predictions are compared
// by their hashes) and how many workers run.
var resumeMayChange = []string{"dataset", "predictions", "repos", "clone_from", "out", "workers", "work_dir"}

// Benchmark is swe eval as merge, report and the HTML page know it. Its
// run.json, the run's Config, is known by its predictions.
func Benchmark() *runner.Benchmark {
	return &runner.Benchmark{
		Name: "swe", ResultsFile: "results.jsonl", Row: &Result{}, Page: Page(),
		Is:          func(info map[string]any) bool { _, ok := info["predictions"]; return ok },
		MergeIgnore: []string{"out", "workers"},
		WriteReport: func(dir, out string, info map[string]any) error {
			info["out"] = out
			return WriteRunOutputs(dir)
		},
	}
}

// WriteRunOutputs writes the reports of the run directory dir from its
// run.json and results.jsonl, as Eval does at its end (used to finish a
// merge of shards).
func WriteRunOutputs(dir string) error {
	c, err := LoadConfig(dir)
	if err != nil {
		return err
	}
	in, err := loadInputs(&c)
	if err != nil {
		return err
	}
	rows, err := ReadResults(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return fmt.Errorf("swe: %w", err)
	}
	return WriteOutputs(dir, c.RunID, in, rows)
}

// LoadConfig reads the run.json of run directory dir.
func LoadConfig(dir string) (Config, error) {
	var c Config
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return c, inputErr("%s is not a swe run directory: %v", dir, err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, inputErr("%s: %v", filepath.Join(dir, "run.json"), err)
	}
	return c, nil
}

// Rerun types.
const (
	RerunMalformed   = "malformed"
	RerunApplyFailed = "apply-failed"
	RerunInfra       = "infra"
	RerunAll         = "all"
)

// rerunAliases are SWE4CC's names of the rerun types: its
// reevaluate_failed_instances.py takes malformed, docker (its
// environment failures, Docker Hub refusing pulls), patch_failed and all.
var rerunAliases = map[string]string{
	"apply_failed": RerunApplyFailed,
	"patch_failed": RerunApplyFailed,
	"docker":       RerunInfra,
}

// RerunType returns the rerun type typ names, SWE4CC's names read as
// patchbench's.
func RerunType(typ string) string {
	if t, ok := rerunAliases[typ]; ok {
		return t
	}
	return typ
}

// RerunSelects reports whether an instance whose final status is status is
// re-evaluated by a rerun of type typ: malformed selects malformed;
// apply-failed selects apply_failed; infra selects test_error, test_timeout
// and infra_error; all selects all of these. empty_patch is never selected
// (there is nothing to re-read), nor are instances that applied.
func RerunSelects(typ, status string) bool {
	switch RerunType(typ) {
	case RerunMalformed:
		return status == StatusMalformed
	case RerunApplyFailed:
		return status == StatusApplyFailed
	case RerunInfra:
		return IsInfra(status)
	case RerunAll:
		return status == StatusMalformed || status == StatusApplyFailed || IsInfra(status)
	}
	return false
}

// RerunOptions control [Rerun].
type RerunOptions struct {
	// From is the run directory of an earlier run.
	From string
	// Type is malformed, apply-failed, infra or all.
	Type string
	// DryRun selects the instances and evaluates none.
	DryRun bool
	// Override changes settings of the earlier run (workers, test options)
	// before it is rerun; nil keeps them.
	Override func(*Config)
	Progress runner.Progress
	Log      io.Writer
}

// RerunSelection returns the rows of the run in dir that a rerun of type
// typ re-evaluates, sorted by instance id.
func RerunSelection(dir, typ string) ([]Row, error) {
	switch RerunType(typ) {
	case RerunMalformed, RerunApplyFailed, RerunInfra, RerunAll:
	default:
		return nil, inputErr("unknown rerun type %q (want malformed, apply-failed, infra or all; or SWE4CC's apply_failed, patch_failed, docker)", typ)
	}
	rows, err := ReadResults(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return nil, inputErr("%s is not a swe run directory: %v", dir, err)
	}
	var sel []Row
	for _, r := range rows {
		if RerunSelects(typ, r.FinalStatus()) {
			sel = append(sel, r)
		}
	}
	sort.Slice(sel, func(i, j int) bool { return sel[i].InstanceID < sel[j].InstanceID })
	return sel, nil
}

// Rerun re-evaluates the instances of one kind from an earlier run with the
// current repair, merges the new rows into that run's results.jsonl (an
// atomic rewrite) and rewrites its reports. With DryRun it only returns the
// selection (in Summary.Evaluated, and the rows through RerunSelection).
func Rerun(ctx context.Context, o RerunOptions) (*Summary, error) {
	sel, err := RerunSelection(o.From, o.Type)
	if err != nil {
		return nil, err
	}
	// The rerun holds the run's directory as a resume does.
	var ro runner.Options
	c, err := LoadConfig(o.From)
	if err != nil {
		return nil, err
	}
	if o.Override != nil {
		o.Override(&c)
	}
	c.Out, _ = filepath.Abs(o.From)
	c.Progress, c.Log = o.Progress, o.Log
	if !o.DryRun {
		sess := runner.NewSession(runner.SessionOptions{Out: c.Out, Command: "patchbench swe rerun", ResultsFile: "results.jsonl", Resume: true})
		if err := sess.Open(&ro); err != nil {
			return nil, err
		}
		defer sess.Close()
	}
	resultsPath := filepath.Join(c.Out, "results.jsonl")
	rows, err := ReadResults(resultsPath)
	if err != nil {
		return nil, fmt.Errorf("swe: %w", err)
	}
	s := &Summary{Evaluated: len(sel)}
	s.Before, s.Instances, _ = countStatuses(rows)
	if o.DryRun || len(sel) == 0 {
		s.Counts = s.Before
		return s, nil
	}
	in, err := loadInputs(&c)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct{ path, want string }{{c.Dataset, c.DatasetSHA256}, {c.Predictions, c.PredictionsSHA256}} {
		if f.want == "" {
			continue
		}
		if got, err := runner.HashFiles(f.path); err != nil || got != f.want {
			return nil, inputErr("%s changed since the run (%s records sha256 %s); rerun needs the run's inputs", f.path, runner.RunFile, f.want)
		}
	}
	ids := map[string]bool{}
	for _, r := range sel {
		ids[r.Key] = true
	}
	e, err := newEvaluator(ctx, &c, in)
	if err != nil {
		return nil, err
	}
	defer e.close()
	if e.test != nil {
		s.Sandbox = e.test.Runner.Name()
	}
	tmp := filepath.Join(c.Out, "results.rerun.jsonl")
	os.Remove(tmp)
	defer os.Remove(tmp)
	// The rerun's rows go to a file of their own; the directory is
	// already held.
	ro.Out, ro.Workers, ro.Progress = tmp, c.workers(), c.Progress
	sum, runErr := runner.Run(ctx, in.cases(ids), e.eval, ro)
	s.Evaluated = sum.Done
	fresh, err := ReadResults(tmp)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, fmt.Errorf("swe: %w", err)
	}
	byKey := map[string]Row{}
	for _, r := range fresh {
		byKey[r.Key] = r
	}
	for i, r := range rows {
		if n, ok := byKey[r.Key]; ok {
			rows[i] = n
		}
	}
	if err := writeRows(resultsPath, rows); err != nil {
		return s, err
	}
	if err := WriteOutputs(c.Out, c.RunID, in, rows); err != nil {
		return s, err
	}
	s.Counts, _, s.Infra = countStatuses(rows)
	if s.RerunReport, err = newRerunReport(o.Type, time.Now(), s, sel, rows).write(c.Out); err != nil {
		return s, err
	}
	if runErr != nil {
		return s, fmt.Errorf("swe: %w", runErr)
	}
	return s, nil
}
