package ape

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/metrics"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
	"github.com/patchbench/patchbench/report/html"
	"github.com/patchbench/patchbench/runner"
)

// ResultsFile is the name of a run's results file.
const ResultsFile = "results.jsonl"

// RunOptions configure Run.
type RunOptions struct {
	Runner runner.Options
	// Model and Judge are the candidate and judge models; see OpenModel.
	Model, Judge runner.ModelOptions
	N, JudgeN    int
	Check        CheckOptions
	// Sampling are the candidates' sampling parameters: Temperature nil
	// means 1; the judge is asked at JudgeTemperature, nil meaning 0.
	Sampling         Sampling
	JudgeTemperature *float64
	// JudgeThinkingBudget, above 0, asks the judge with extended thinking
	// of that many tokens (Anthropic; APE-Bench's judge is Claude 3.7
	// Sonnet with thinking), at the only temperature the API then takes:
	// JudgeTemperature is not sent.
	JudgeThinkingBudget int
	// Format is the edit format the model is asked for (udiff when empty).
	Format patch.Format
	// K and KRatio choose the k of the report's pass@k (see WriteReport).
	K      int
	KRatio float64
}

// Sampling are the sampling parameters of the candidates' requests.
type Sampling struct {
	Temperature *float64
	MaxTokens   int
	Seed        *int64
}

// Candidate statuses (Result.Status) of candidates that were not
// evaluated: they are named in the report and not counted in pass@k.
const (
	// StatusEnvironment: the environment could not be had or used (not in
	// the store, the sandbox did not start, a toolchain or the modules
	// the check needs are missing).
	StatusEnvironment = "environment-error"
	// StatusInput: the task names a path that may not be written (absolute,
	// with "..", inside .git, through a symbolic link).
	StatusInput = "input-error"
)

// ErrEnvironment is wrapped by the errors of a compile stage that could
// not check the candidate for want of its environment.
var ErrEnvironment = errors.New("environment problem")

// Result is one candidate's row in results.jsonl.
type Result struct {
	Task       string `json:"task"`
	Sample     int    `json:"sample"`
	Path       string `json:"path"`
	Category   string `json:"category"`
	Difficulty string `json:"difficulty"`
	Response   string `json:"response,omitempty"`
	Applied    bool   `json:"applied"`
	ApplyError string `json:"apply_error,omitempty"`
	// Patch is the applied candidate as a unified diff of the file (what
	// the judge sees), so that a run can be judged again (Rejudge).
	Patch string `json:"patch,omitempty"`
	Check        // compile stage
	// Status is StatusEnvironment or StatusInput for a candidate that was
	// not evaluated, with the reason in NotEvaluated; empty otherwise.
	Status       string `json:"status,omitempty"`
	NotEvaluated string `json:"not_evaluated,omitempty"`
	// JudgeModel is the judge that graded the candidate ("reference" is
	// the exact-match judge, not a model).
	JudgeModel string `json:"judge_model,omitempty"`
	// Votes are the TaskEvaluations grades of each vote, as the judge
	// wrote them (none for a vote without a readable answer, which
	// JudgeError names); FinalGrades each vote's FinalOverallGrade.
	Votes       [][]string `json:"votes,omitempty"`
	FinalGrades []string   `json:"final_grades,omitempty"`
	JudgeError  []string   `json:"judge_errors,omitempty"`
	VoteCount
	// JudgePass is APE-Bench's rule over the votes (see Verdict).
	JudgePass bool `json:"judge_pass"`
	// ErrorCategories are the votes' error categories (see
	// ParseCategory; none when no vote named one), and ErrorCategory their
	// majority.
	ErrorCategories []string `json:"judge_error_categories,omitempty"`
	ErrorCategory   string   `json:"judge_error_category,omitempty"`
	// Dimensions are each vote's per-dimension grades (see
	// ParseDimensions), when the judge gave them.
	Dimensions []map[string]string `json:"judge_dimensions,omitempty"`
	runner.ModelCalls
	Faults
}

// Benchmark is APE-Bench (ape run and ape judge) as merge, report and the
// HTML page know it.
func Benchmark() *runner.Benchmark {
	return &runner.Benchmark{
		Name: "ape", ResultsFile: ResultsFile, Row: &Result{}, Page: Page(),
		WriteReport: func(dir, _ string, info map[string]any) error {
			n, _ := info["n"].(float64)
			k, _ := info["k"].(float64)
			ratio, _ := info["k_ratio"].(float64)
			_, err := WriteReport(dir, int(n), int(k), ratio)
			return err
		},
	}
}

type sample struct {
	task *Task
	n    int
}

// replayKey names a replay row: candidates by task and sample, judge
// answers by task, sample and vote.
func replayKey(parts ...any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, "#")
}

// OpenModel opens o for the run: "reference" answers from the tasks (the
// gold patch as candidate; as judge, Excellent exactly when the patched
// file equals the gold result), and replay/FILE reads APE rows {id, sample,
// response} or {id, sample, vote, response}; everything else goes through
// runner.OpenModel unchanged.
func OpenModel(ctx context.Context, o runner.ModelOptions, judge bool) (*runner.Model, error) {
	switch {
	case o.Model == llm.ProviderReference:
		o.LLM.Oracle = func(ctx context.Context, req llm.Request) (string, error) {
			if ins, ok := req.Meta["instruction"]; ok {
				return ins, nil // as the instruction model: the commit's own
			}
			if judge {
				g, why, cat := "Excellent", "gives", "none"
				if req.Meta["match"] != "true" {
					g, why, cat = "Unacceptable", "differs from", "wrong-logic"
				}
				return fmt.Sprintf("Exact match: the edit %s the gold result.\nCorrectness: %[2]s\nCompleteness: %[2]s\nScope: %[2]s\nError category: %s\n"+
					"```json\n{\"TaskEvaluations\": {\"Task 1\": %[2]q}, \"FinalOverallGrade\": %[2]q}\n```\n", why, g, cat), nil
			}
			return "```diff\n" + req.Meta["gold"] + "```\n", nil // gold in the run's format
		}
	case strings.HasPrefix(o.Model, "replay/"):
		rp, err := readReplay(strings.TrimPrefix(o.Model, "replay/"))
		if err != nil {
			return nil, err
		}
		o.Client = rp
	default:
		if o.Client == nil && o.LLM.HTTPClient == nil {
			o.LLM.HTTPClient = countingClient()
		}
	}
	return runner.OpenModel(ctx, o)
}

func readReplay(path string) (*llm.Replay, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ape replay: %w", err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 256<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var row struct {
			ID       string `json:"id"`
			Sample   int    `json:"sample"`
			Vote     *int   `json:"vote"`
			Response string `json:"response"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("ape replay: %s:%d: %w", path, line, err)
		}
		key := replayKey(row.ID, row.Sample)
		if row.Vote != nil {
			key = replayKey(row.ID, row.Sample, *row.Vote)
		}
		b, _ := json.Marshal(llm.ReplayRow{ID: key, Response: row.Response})
		out.Write(append(b, '\n'))
	}
	return llm.ReadReplay(&out, path)
}

// editPrompt asks for an edit of t's file in format f, described as every
// prompt of patchbench describes it (patch.FormatDescription).
func editPrompt(t *Task, f patch.Format) string {
	return fmt.Sprintf("Edit %s as the instruction asks. Answer with the edit, written as %s, in a fenced code block.\n\n%s\n\nInstruction:\n%s\n\nThe file:\n```\n%s```\n",
		t.Path(), patch.FormatName(f), patch.FormatDescription(f), t.Instruction, t.ContentBefore)
}

// canonical prints the edit from t's PreFile to content in format f.
func canonical(t *Task, content string, f patch.Format) (string, error) {
	p := &patch.Patch{Files: []*patch.FilePatch{patch.Make(t.Path(), t.Path(), t.ContentBefore, content, patch.MakeOptions{})}}
	return patch.Print(p, f)
}

// ApplyCandidate extracts the edit from a response, repairs it and applies
// it to the task's PreFile.
func ApplyCandidate(t *Task, response string) (string, error) {
	p := t.Path()
	res, err := repair.Repair(response, repair.Options{Target: p, FS: patch.MapFS{p: t.ContentBefore}, Strip: 1})
	if err != nil {
		return "", err
	}
	for _, r := range res.Results {
		if r.Path == p && r.Content != nil {
			return string(r.Content), nil
		}
	}
	return "", fmt.Errorf("repair: the edit does not produce %s", p)
}

// Run generates opts.N candidates per task, applies, compiles and judges
// them, writing one row per candidate to opts.Runner.Out through the
// runner (so Resume skips candidates already done), then report.json
// beside it.
func Run(ctx context.Context, tasks []Task, opts RunOptions) (runner.Summary, *Report, error) {
	var cases []runner.Case
	for i := range tasks {
		for s := 0; s < opts.N; s++ {
			cases = append(cases, runner.Case{ID: tasks[i].ID, Key: replayKey(tasks[i].ID, s), Data: sample{&tasks[i], s}})
		}
	}
	if opts.Runner.DryRun {
		// A dry run lists the candidates and asks nothing: no model is
		// opened, so no key is needed and no cache file is made.
		sum, err := runner.Run(ctx, cases, nil, opts.Runner)
		return sum, nil, err
	}
	model, err := OpenModel(ctx, opts.Model, false)
	if err != nil {
		return runner.Summary{}, nil, err
	}
	defer model.Close()
	judge, err := OpenModel(ctx, opts.Judge, true)
	if err != nil {
		return runner.Summary{}, nil, err
	}
	defer judge.Close()
	check, done, err := withGoCache(opts.Check)
	if err != nil {
		return runner.Summary{}, nil, err
	}
	defer done()
	opts.Check = check
	fn := func(ctx context.Context, c runner.Case) (runner.Result, error) {
		sm := c.Data.(sample)
		return candidate(ctx, sm.task, sm.n, model, judge, opts)
	}
	sum, err := runner.Run(ctx, cases, fn, opts.Runner)
	if err != nil {
		return sum, nil, err
	}
	rep, err := WriteReport(filepath.Dir(opts.Runner.Out), opts.N, opts.K, opts.KRatio)
	return sum, rep, err
}

func candidate(ctx context.Context, t *Task, n int, model, judge *runner.Model, opts RunOptions) (*Result, error) {
	r := &Result{Task: t.ID, Sample: n, Path: t.Path(), Category: t.Category, Difficulty: t.Difficulty}
	f := opts.Format
	if f == "" {
		f = patch.UDiff
	}
	gold, err := canonical(t, t.ContentAfter, f)
	if err != nil {
		return r, fmt.Errorf("ape: gold patch of %s: %w", t.ID, err)
	}
	if err := checkTaskPaths(t); err != nil {
		return notEvaluated(r, StatusInput, err)
	}
	meta := map[string]string{"id": replayKey(t.ID, n), "gold": gold}
	temp := 1.0
	if opts.Sampling.Temperature != nil {
		temp = *opts.Sampling.Temperature
	}
	ctx = withFaults(ctx, &r.Faults)
	r.Faults.call()
	resp, err := model.Recording(&r.ModelCalls).Complete(ctx, llm.Request{
		Messages: []llm.Message{{Role: "user", Content: editPrompt(t, f)}}, Temperature: &temp,
		MaxTokens: opts.Sampling.MaxTokens, Seed: opts.Sampling.Seed,
		Sample: strconv.Itoa(n), Meta: meta,
	})
	if err != nil {
		return r, fmt.Errorf("ape: candidate %d of %s: %w", n, t.ID, err)
	}
	r.Response = resp.Text
	content, err := ApplyCandidate(t, resp.Text)
	if err != nil {
		r.ApplyError = err.Error()
		return r, nil
	}
	r.Applied = true
	if r.Patch, err = canonical(t, content, patch.UDiff); err != nil {
		return r, fmt.Errorf("ape: candidate %d of %s: %w", n, t.ID, err)
	}
	r.Check, err = Compile(ctx, t, content, opts.Check)
	switch {
	case errors.Is(err, patch.ErrUnsafePath):
		return notEvaluated(r, StatusInput, err)
	case errors.Is(err, ErrEnvironment):
		return notEvaluated(r, StatusEnvironment, err)
	case err != nil:
		return r, err
	case !r.Check.Pass && r.Check.Kind() == KindEnvironment:
		return notEvaluated(r, StatusEnvironment, fmt.Errorf("ape compile %s: %w: %s", t.ID, ErrEnvironment, r.Check.Errors[0]))
	case !r.Check.Pass:
		return r, nil
	}
	return r, judgeCandidate(ctx, t, n, content, r.Patch, judge, judgeSettings{opts.JudgeN, opts.JudgeTemperature, opts.JudgeThinkingBudget}, r)
}

// notEvaluated records why r could not be evaluated. The row is a failed
// one for the runner (so --resume --retry-failed tries it again once the
// environment or the task is fixed), and the report names it and leaves it
// out of pass@k.
func notEvaluated(r *Result, status string, err error) (*Result, error) {
	r.Status, r.NotEvaluated = status, err.Error()
	return r, err
}

// checkTaskPaths refuses a task whose file paths may not be written
// inside a tree.
func checkTaskPaths(t *Task) error {
	if err := checkPaths(t); err != nil {
		return fmt.Errorf("ape: task %s: %w", t.ID, err)
	}
	return nil
}

// checkPaths applies patch.CheckPath to t's file paths.
func checkPaths(t *Task) error {
	for _, p := range []string{t.FilePathBefore, t.FilePathAfter} {
		if p == "" {
			continue
		}
		if err := patch.CheckPath(p); err != nil {
			return err
		}
	}
	return nil
}

// judgeSettings are how many votes the judge gives and at which
// temperature (nil: 0).
type judgeSettings struct {
	votes       int
	temperature *float64
	thinking    int // tokens of extended thinking; 0 for none
}

// judgeCandidate asks the judge for js.votes votes (at temperature 0
// unless js says otherwise), each its own sample of the request (sample
// "n/v": the votes on two candidates with the same patch are asked for
// apart, as APE-Bench judges each candidate), and
// applies APE-Bench's rule to them. A vote whose answer holds no readable
// TaskEvaluations is recorded (with its error) and counts for neither side.
func judgeCandidate(ctx context.Context, t *Task, n int, content, canon string, judge *runner.Model, js judgeSettings, r *Result) error {
	temp := 0.0
	if js.temperature != nil {
		temp = *js.temperature
	}
	tempp := &temp
	if js.thinking > 0 {
		tempp = nil // the API takes its default, 1, with thinking
	}
	r.JudgeModel = judge.Name()
	r.Votes, r.FinalGrades, r.JudgeError, r.ErrorCategories, r.Dimensions = nil, nil, nil, nil, nil
	dims := false
	for v := 0; v < max(js.votes, 1); v++ {
		meta := map[string]string{"id": replayKey(t.ID, n, v), "match": strconv.FormatBool(content == t.ContentAfter)}
		r.Faults.call()
		resp, err := judge.Recording(&r.ModelCalls).Complete(ctx, llm.Request{
			Messages:    []llm.Message{{Role: "user", Content: judgePrompt(t, canon)}},
			Temperature: tempp, ThinkingBudget: js.thinking, Sample: fmt.Sprintf("%d/%d", n, v), Meta: meta,
		})
		if err != nil {
			return fmt.Errorf("ape: judge vote %d of %s sample %d: %w", v, t.ID, n, err)
		}
		j, perr := ParseJudgement(resp.Text)
		if perr != nil {
			r.JudgeError = append(r.JudgeError, fmt.Sprintf("vote %d: %v", v, perr))
		}
		r.Votes = append(r.Votes, j.Grades)
		r.FinalGrades = append(r.FinalGrades, j.Final)
		r.ErrorCategories = append(r.ErrorCategories, ParseCategory(resp.Text))
		dimensions := ParseDimensions(resp.Text)
		r.Dimensions = append(r.Dimensions, dimensions)
		dims = dims || dimensions != nil
	}
	if !dims {
		r.Dimensions = nil
	}
	if !slices.ContainsFunc(r.FinalGrades, func(g string) bool { return g != "" }) {
		r.FinalGrades = nil
	}
	r.JudgePass, r.VoteCount = Verdict(r.Votes)
	r.ErrorCategory = MajorityCategory(r.ErrorCategories)
	if r.ErrorCategory == "" {
		r.ErrorCategories = nil
	}
	return nil
}

// RejudgeOptions configure Rejudge.
type RejudgeOptions struct {
	// From is the run directory judged again; Runner.Out is the new
	// results file (in another directory).
	From   string
	Runner runner.Options
	Judge  runner.ModelOptions
	JudgeN int
	// JudgeTemperature is the judge's temperature; nil means 0.
	JudgeTemperature *float64
	// JudgeThinkingBudget is RunOptions.JudgeThinkingBudget.
	JudgeThinkingBudget int
	N, K                int
	KRatio              float64
}

// Rejudge judges again the compiled candidates of the run in opts.From with
// another judge, from the patches its results hold: nothing is generated
// or compiled again. Rows that did not compile are copied as they are.
func Rejudge(ctx context.Context, tasks []Task, opts RejudgeOptions) (runner.Summary, *Report, error) {
	rows, err := runner.ReadRows(filepath.Join(opts.From, ResultsFile))
	if err != nil {
		return runner.Summary{}, nil, err
	}
	byID := map[string]*Task{}
	for i := range tasks {
		byID[tasks[i].ID] = &tasks[i]
	}
	var cases []runner.Case
	for _, row := range rows {
		key, _ := row["key"].(string)
		id, _ := row["id"].(string)
		cases = append(cases, runner.Case{ID: id, Key: key, Data: row})
	}
	if opts.Runner.DryRun {
		sum, err := runner.Run(ctx, cases, nil, opts.Runner) // asks nothing, as in Run
		return sum, nil, err
	}
	judge, err := OpenModel(ctx, opts.Judge, true)
	if err != nil {
		return runner.Summary{}, nil, err
	}
	defer judge.Close()
	fn := func(ctx context.Context, c runner.Case) (runner.Result, error) {
		row := c.Data.(map[string]any)
		b, err := json.Marshal(row)
		if err != nil {
			return nil, err
		}
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("ape judge: row %s: %w", c.Key, err)
		}
		if failed, _ := row["failed"].(bool); failed {
			msg, _ := row["error"].(string)
			return &r, fmt.Errorf("%s (failed in %s)", msg, opts.From)
		}
		if !r.Pass {
			return &r, nil
		}
		t := byID[r.Task]
		if t == nil {
			return &r, fmt.Errorf("ape judge: task %s of row %s is not in the dataset", r.Task, c.Key)
		}
		content, err := ApplyCandidate(t, "```diff\n"+r.Patch+"```\n")
		if err != nil {
			return &r, fmt.Errorf("ape judge: stored patch of %s sample %d: %w", r.Task, r.Sample, err)
		}
		r.ModelCalls = runner.ModelCalls{}
		r.Faults = Faults{}
		r.VoteCount, r.JudgePass, r.ErrorCategory = VoteCount{}, false, ""
		ctx = withFaults(ctx, &r.Faults)
		return &r, judgeCandidate(ctx, t, r.Sample, content, r.Patch, judge, judgeSettings{opts.JudgeN, opts.JudgeTemperature, opts.JudgeThinkingBudget}, &r)
	}
	sum, err := runner.Run(ctx, cases, fn, opts.Runner)
	if err != nil {
		return sum, nil, err
	}
	rep, err := WriteReport(filepath.Dir(opts.Runner.Out), opts.N, opts.K, opts.KRatio)
	return sum, rep, err
}

// Figures are pass@k figures of a group of tasks.
type Figures map[string]float64

// Report is report.json.
type Report struct {
	N          int `json:"n"`
	K          int `json:"k"`
	Tasks      int `json:"tasks"`
	Candidates int `json:"candidates"`
	Applied    int `json:"applied"`
	Compiled   int `json:"compiled"`
	JudgePass  int `json:"judge_passed"`
	Failed     int `json:"failed_rows"`
	// Judge names the judge of the judged candidates; the exact-match
	// judge (reference) is named as such, for it is no model.
	Judge string `json:"judge,omitempty"`
	// NotEvaluated names the candidates that could not be evaluated
	// (environment or input problems, see Result.Status), which pass@k
	// leaves out: a task's n is its candidates less these.
	NotEvaluated []string `json:"not_evaluated,omitempty"`
	// ShortOfK names the tasks left with fewer than K evaluated
	// candidates: they have no pass@K and are in no average.
	ShortOfK []string `json:"short_of_k,omitempty"`
	// UnparsedVotes counts judge answers that could not be parsed.
	UnparsedVotes int `json:"unparsed_judge_answers"`
	// Retries and ErrorStatuses total the rows' Faults: model attempts
	// retried, and attempts answered by status (429, 500, ...).
	Retries       int                `json:"model_retries"`
	ErrorStatuses map[string]int     `json:"model_error_statuses,omitempty"`
	Overall       Figures            `json:"overall"`
	ByCategory    map[string]Figures `json:"by_category"`
	ByDiff        map[string]Figures `json:"by_difficulty"`
	// ByLanguage are the figures by the language of the task's file (its
	// extension: go, python, lean, ...).
	ByLanguage map[string]Figures `json:"by_language"`
	// CompileErrorKinds counts the candidates that applied and did not
	// compile by the kind of their first error (see ErrorKind).
	CompileErrorKinds map[string]int `json:"compile_error_kinds,omitempty"`
	// JudgeErrorCategories counts the judged candidates by the majority
	// error category of their votes (the judge's taxonomy).
	JudgeErrorCategories map[string]int `json:"judge_error_categories,omitempty"`
}

// ExactMatchJudge is how reports name the reference judge.
const ExactMatchJudge = "exact match with the gold file (reference judge, no model)"

// WriteReport reads dir/results.jsonl and writes dir/report.json: per task
// the number of candidates that compile (c) and that pass the judge, then
// compile_pass@K, judge_pass@K and semantic_drop (the percentage of
// compile_pass@K the judge takes away; compile_judge_gap is the absolute
// difference) averaged over tasks; and dir/report.md. k 0 means
// metrics.KFromRatio(n, ratio), ratio 0 means 0.8. A task's candidates that
// could not be evaluated (Result.Status) are left out of its n; a task left
// with fewer than k has no pass@k and is not averaged (Report.ShortOfK).
// A k above n is an error.
func WriteReport(dir string, n, k int, ratio float64) (*Report, error) {
	rows, err := runner.ReadRows(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, err
	}
	// In key order, so that the averages do not depend on the order the
	// candidates finished in or on how the run was sharded.
	runner.SortRows(rows)
	if ratio == 0 {
		ratio = 0.8
	}
	if k == 0 {
		k = metrics.KFromRatio(n, ratio)
	}
	if n < 1 || k < 1 || k > n {
		// pass@k of more samples than were drawn is not defined; a
		// report headed pass@k must not hold pass@n.
		return nil, fmt.Errorf("ape report: k %d must be between 1 and n %d", k, n)
	}
	rep := &Report{N: n, K: k, ByCategory: map[string]Figures{}, ByDiff: map[string]Figures{}, ByLanguage: map[string]Figures{}}
	lang := map[string]string{}
	type counts struct{ compile, judge, out int }
	judges := map[string]bool{}
	per := map[string]*counts{}
	group := map[string][2]string{}
	for _, row := range rows {
		id, _ := row["task"].(string)
		if per[id] == nil {
			per[id] = &counts{}
			cat, _ := row["category"].(string)
			diff, _ := row["difficulty"].(string)
			group[id] = [2]string{cat, diff}
			path, _ := row["path"].(string)
			lang[id] = LanguageOf(path)
		}
		rep.Candidates++
		if st, _ := row["status"].(string); st == StatusEnvironment || st == StatusInput {
			per[id].out++
			sample, _ := row["sample"].(float64)
			why, _ := row["not_evaluated"].(string)
			rep.NotEvaluated = append(rep.NotEvaluated, fmt.Sprintf("%s sample %d: %s: %s", id, int(sample), st, why))
			continue
		}
		if j, ok := row["judge_model"].(string); ok && j != "" {
			judges[j] = true
		}
		if row["applied"] == true {
			rep.Applied++
		}
		if row["failed"] == true {
			rep.Failed++
		}
		if n, ok := row["model_retries"].(float64); ok {
			rep.Retries += int(n)
		}
		if st, ok := row["model_error_statuses"].(map[string]any); ok {
			if rep.ErrorStatuses == nil {
				rep.ErrorStatuses = map[string]int{}
			}
			for k, v := range st {
				n, _ := v.(float64)
				rep.ErrorStatuses[k] += int(n)
			}
		}
		if errs, ok := row["judge_errors"].([]any); ok {
			rep.UnparsedVotes += len(errs)
		}
		if row["compile_pass"] == true {
			rep.Compiled++
			per[id].compile++
		} else if row["applied"] == true && row["failed"] != true {
			if rep.CompileErrorKinds == nil {
				rep.CompileErrorKinds = map[string]int{}
			}
			first := ""
			if errs, ok := row["compile_errors"].([]any); ok && len(errs) > 0 {
				first, _ = errs[0].(string)
			}
			rep.CompileErrorKinds[ErrorKind(first, row["compile_timed_out"] == true)]++
		}
		if c, ok := row["judge_error_category"].(string); ok && c != "" {
			if rep.JudgeErrorCategories == nil {
				rep.JudgeErrorCategories = map[string]int{}
			}
			rep.JudgeErrorCategories[c]++
		}
		if row["judge_pass"] == true {
			rep.JudgePass++
			per[id].judge++
		}
	}
	rep.Tasks = len(per)
	names := slices.Sorted(maps.Keys(judges))
	for i, j := range names {
		if j == llm.ProviderReference {
			names[i] = ExactMatchJudge
		}
	}
	rep.Judge = strings.Join(names, ", ")
	figs := func(ids []string) Figures {
		var cs, js []float64
		for _, id := range ids {
			ni := n - per[id].out
			if ni < k {
				// No pass@k of fewer than k samples: named in
				// ShortOfK (or, with none, in NotEvaluated).
				continue
			}
			cs = append(cs, metrics.PassAtK(ni, min(per[id].compile, ni), k))
			js = append(js, metrics.PassAtK(ni, min(per[id].judge, ni), k))
		}
		if len(cs) == 0 {
			return Figures{} // a shard without tasks: no averages
		}
		c, j := metrics.Mean(cs), metrics.Mean(js)
		return Figures{fmt.Sprintf("compile_pass@%d", k): c, fmt.Sprintf("judge_pass@%d", k): j,
			"semantic_drop": metrics.SemanticDrop(c, j), "compile_judge_gap": c - j, "tasks": float64(len(cs))}
	}
	for _, id := range slices.Sorted(maps.Keys(per)) {
		if ni := n - per[id].out; ni >= 1 && ni < k {
			rep.ShortOfK = append(rep.ShortOfK, fmt.Sprintf("%s: %d of %d candidates evaluated, fewer than k %d", id, ni, n, k))
		}
	}
	var all []string
	byCat, byDiff, byLang := map[string][]string{}, map[string][]string{}, map[string][]string{}
	// In id order: the averages must not depend on map order.
	for _, id := range slices.Sorted(maps.Keys(per)) {
		all = append(all, id)
		byCat[group[id][0]] = append(byCat[group[id][0]], id)
		byDiff[group[id][1]] = append(byDiff[group[id][1]], id)
		byLang[lang[id]] = append(byLang[lang[id]], id)
	}
	rep.Overall = figs(all)
	for c, ids := range byCat {
		rep.ByCategory[c] = figs(ids)
	}
	for d, ids := range byDiff {
		rep.ByDiff[d] = figs(ids)
	}
	for l, ids := range byLang {
		rep.ByLanguage[l] = figs(ids)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "report.json"), append(data, '\n')); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown())); err != nil {
		return nil, err
	}
	// report.html: the pass@k curves and every candidate, for people to
	// browse.
	title := "APE-Bench: " + filepath.Base(filepath.Clean(dir))
	if rep.Judge != "" {
		title += " (judge: " + rep.Judge + ")"
	}
	if err := html.WriteRunDir(dir, title, Page(), nil); err != nil {
		return nil, fmt.Errorf("ape: %w", err)
	}
	return rep, nil
}

// Markdown renders the report as report.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	c, j := fmt.Sprintf("compile_pass@%d", r.K), fmt.Sprintf("judge_pass@%d", r.K)
	fmt.Fprintf(&b, "# APE-Bench report\n\n%d tasks, n = %d, k = %d: %d candidates, %d applied, %d compiled, %d passed the judge, %d failed rows, %d unparsed judge answers.\n\n",
		r.Tasks, r.N, r.K, r.Candidates, r.Applied, r.Compiled, r.JudgePass, r.Failed, r.UnparsedVotes)
	if r.Judge != "" {
		fmt.Fprintf(&b, "Judge: %s.\n\n", r.Judge)
	}
	if r.Retries > 0 {
		fmt.Fprintf(&b, "Model calls retried %d times; error statuses: %v.\n\n", r.Retries, r.ErrorStatuses)
	}
	fmt.Fprintf(&b, "| group | %s | %s | semantic_drop %% | compile_judge_gap |\n| --- | ---: | ---: | ---: | ---: |\n", c, j)
	line := func(name string, f Figures) {
		if _, ok := f["tasks"]; !ok {
			fmt.Fprintf(&b, "| %s | n/a | n/a | n/a | n/a |\n", name) // no candidate evaluated
			return
		}
		fmt.Fprintf(&b, "| %s | %.4f | %.4f | %.2f | %.4f |\n", name, f[c], f[j], f["semantic_drop"], f["compile_judge_gap"])
	}
	line("overall", r.Overall)
	for gi, group := range []map[string]Figures{r.ByCategory, r.ByDiff, r.ByLanguage} {
		names := make([]string, 0, len(group))
		for name := range group {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if gi == 2 {
				line("language "+name, group[name])
			} else {
				line(name, group[name])
			}
		}
	}
	counts := func(title string, m map[string]int) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n\n| kind | candidates |\n| --- | ---: |\n", title)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "| %s | %d |\n", k, m[k])
		}
	}
	counts("Compile errors (first error of each candidate that applied and did not compile)", r.CompileErrorKinds)
	counts("Judge error categories (majority of the votes)", r.JudgeErrorCategories)
	if len(r.NotEvaluated) > 0 {
		fmt.Fprintf(&b, "\nNot evaluated (left out of pass@k): %d candidates\n\n", len(r.NotEvaluated))
		for _, s := range r.NotEvaluated {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	if len(r.ShortOfK) > 0 {
		fmt.Fprintf(&b, "\nLeft out of pass@%d (fewer than %d candidates evaluated): %d tasks\n\n", r.K, r.K, len(r.ShortOfK))
		for _, s := range r.ShortOfK {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}
