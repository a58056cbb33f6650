package benchcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/codesearch"
	"github.com/patchbench/patchbench/hfhub"
	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

func newLocCommand(sio cli.Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loc",
		Short: cli.FullShort("loc"),
		Long: `Loc-Bench measures how well a search finds the code an issue is about: each
case is a query (an issue text or commit message), a repository at a commit,
and the ground truth (files, line ranges, functions) of the fixing change.
See README, "Code localization".`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Usage(errors.New("loc: give a subcommand: build, validate, run, grid or analyze"))
		},
	}
	cmd.AddCommand(newLocBuildCommand(sio), newLocValidateCommand(sio), newLocRunCommand(sio),
		newLocGridCommand(sio), newLocAnalyzeCommand(sio))
	return cmd
}

type locRepoFlags struct{ repos, cloneFrom string }

// defaultRepos is where repositories are looked for without --repos, as
// relace-mcp's benchmark keeps its clones in a directory of its own (so
// its `validate --input FILE` needs no other argument): the user's cache
// directory, patchbench/repos.
func defaultRepos() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no --repos and no cache directory for the default: %w", err)
	}
	return filepath.Join(d, "patchbench", "repos"), nil
}

// resolve fills --repos with [defaultRepos] when it was not given.
func (r *locRepoFlags) resolve() error {
	if r.repos != "" {
		return nil
	}
	d, err := defaultRepos()
	r.repos = d
	return err
}

func (r *locRepoFlags) store() *repo.Store {
	s := repo.NewStore(r.repos)
	// Without --clone-from nothing is cloned: a missing repository is an
	// error naming it at once, and nothing reaches the network.
	s.BaseURL, s.NoClone = r.cloneFrom, r.cloneFrom == ""
	return s
}

func (r *locRepoFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.repos, "repos", "", "repositories `DIR`: DIR/OWNER/NAME (bare or not; also OWNER/NAME.git, OWNER__NAME); default the user cache directory's patchbench/repos")
	f.StringVar(&r.cloneFrom, "clone-from", "", "clone missing repositories once from `URL`/OWNER/NAME (https://github.com for GitHub); without it a missing repository is an error")
}

// reportProblems prints one line per problem and returns the exit error.
func reportProblems(sio cli.Stdio, what string, problems []loc.Problem, of int) error {
	for _, p := range problems {
		fmt.Fprintf(sio.Err, "%s: %s\n", cli.ProgramName, p)
	}
	if len(problems) > 0 {
		return cli.Failed(fmt.Errorf("%s: %d problems in %d cases", what, len(problems), of))
	}
	return nil
}

type locBuildOptions struct {
	dataset, out, format      string
	output                    string
	repoDir, commits, name    string
	maxFiles, maxLines, minLn int
	kinds                     string
	repos                     locRepoFlags
}

func newLocBuildCommand(sio cli.Stdio) *cobra.Command {
	var o locBuildOptions
	cmd := &cobra.Command{
		Use:   "build (--dataset FILE --repos DIR | --repo DIR --commits RANGE) --out CASES.jsonl",
		Short: "Make Loc-Bench cases from a SWE-bench-schema dataset or a git history",
		Long: `Write one case per line to --out from either
  --dataset FILE: SWE-bench schema (instance_id, repo, base_commit,
    problem_statement, patch; JSONL, JSON or Parquet) or Loc-Bench_V1 (also
    category, edit_functions); repositories under --repos DIR; or
  --repo DIR --commits RANGE: every non-merge commit of RANGE (git rev-list
    syntax); query = the commit message, base_commit = its parent, category =
    the commit's kind (fix, feature, refactor, docs, test, other).
Ground truth: the patch's old-side lines at base_commit, grouped by the
innermost function (tree-sitter), clustered (a line joins the cluster before
it when at most 3 unchanged lines lie between), more than 2 clusters of a
function collapsed to [first, last], clamped to the function.

Exit status: 0 every row made a case; 1 some rows were left out (each
reported with its id); 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runLocBuild(cmd.Context(), o, sio) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", "", "dataset `FILE`: .jsonl, .json (.gz) or .parquet"+datasetFlagHelp)
	f.StringVar(&o.repoDir, "repo", "", "build from the history of the git repository `DIR`")
	f.StringVar(&o.commits, "commits", "", "with --repo: the commits, as git rev-list takes them (e.g. v1.0..main, -n50 HEAD)")
	f.StringVar(&o.name, "name", "", "with --repo: the repository's OWNER/NAME in the cases (default local/BASENAME)")
	f.IntVar(&o.maxFiles, "max-files", 5, "with --repo: skip commits changing more than `N` files (0: no bound)")
	f.IntVar(&o.maxLines, "max-lines", 200, "with --repo: skip commits changing more than `N` lines (0: no bound)")
	f.IntVar(&o.minLn, "min-lines", 1, "with --repo: skip commits changing fewer than `N` lines")
	f.StringVar(&o.kinds, "kind", "", "with --repo: keep only these commit kinds, comma-separated (fix, feature, refactor, docs, test, other)")
	f.StringVar(&o.out, "out", "", "cases `FILE` to write (JSONL)")
	f.StringVar(&o.output, "output", "", "another name of --out (relace-mcp)")
	f.StringVar(&o.format, "format", "cases", "schema of --out: cases (patchbench's) or relace (relace-mcp's hard_gt entries; cases without a function left out)")
	o.repos.register(cmd)
	return cmd
}

func runLocBuild(ctx context.Context, o locBuildOptions, sio cli.Stdio) error {
	if o.output != "" {
		if o.out != "" && o.out != o.output {
			return cli.Usage(fmt.Errorf("loc build: --out %s and --output %s differ", o.out, o.output))
		}
		o.out = o.output
	}
	if o.out == "" {
		return cli.Usage(errors.New("loc build: --out is required"))
	}
	if o.format != "cases" && o.format != "relace" {
		return cli.Usage(fmt.Errorf("loc build: --format %q: want cases or relace", o.format))
	}
	if (o.dataset == "") == (o.repoDir == "") {
		return cli.Usage(errors.New("loc build: give either --dataset or --repo"))
	}
	var cases []loc.Case
	var problems []loc.Problem
	var skipped, rows int
	if o.dataset != "" {
		if err := o.repos.resolve(); err != nil {
			return cli.Usage(fmt.Errorf("loc build: %w", err))
		}
		var err error
		if o.dataset, err = datasetPath(ctx, o.dataset, sio); err != nil {
			return err
		}
		store := o.repos.store()
		defer store.Close()
		cases, problems, err = loc.BuildFromDataset(ctx, o.dataset, store)
		if err != nil {
			return cli.Usage(err)
		}
		rows = len(cases) + loc.RowsOf(problems)
		if len(cases) == 0 && len(problems) > 0 {
			// Nothing to write: a refusal leaves no file.
			fmt.Fprintf(sio.Err, "%s: no case made of %d rows; nothing written to %s\n", cli.ProgramName, rows, o.out)
			return buildProblems(sio, problems, rows)
		}
	} else {
		if o.commits == "" {
			return cli.Usage(errors.New("loc build: --repo needs --commits"))
		}
		rp, err := repo.Open(ctx, o.repoDir)
		if err != nil {
			return cli.Usage(err)
		}
		defer rp.Close()
		name := o.name
		if name == "" {
			abs, _ := filepath.Abs(o.repoDir)
			name = "local/" + strings.TrimSuffix(filepath.Base(abs), ".git")
		}
		var kinds []string
		if o.kinds != "" {
			kinds = strings.Split(o.kinds, ",")
		}
		cases, problems, skipped, err = loc.BuildFromHistory(ctx, rp, name, o.commits,
			loc.HistoryFilter{MaxFiles: o.maxFiles, MaxLines: o.maxLines, MinLines: o.minLn, Kinds: kinds})
		if err != nil {
			return cli.Usage(err)
		}
		rows = len(cases) + len(problems) + skipped
	}
	written := len(cases)
	schema := ""
	if o.format == "relace" {
		n, left, err := loc.WriteRelaceCases(o.out, cases)
		if err != nil {
			return err
		}
		written, problems, schema = n, append(problems, left...), " in relace-mcp's schema"
	} else if err := loc.WriteCases(o.out, cases); err != nil {
		return err
	}
	fmt.Fprintf(sio.Err, "%s: %d cases written to %s%s (%d rows or commits, %d skipped by the filters, %d with problems)\n",
		cli.ProgramName, written, o.out, schema, rows, skipped, len(problems))
	return buildProblems(sio, problems, rows)
}

// buildProblems prints loc build's problems and returns the exit error:
// a problem may leave out several rows (a missing repository).
func buildProblems(sio cli.Stdio, problems []loc.Problem, rows int) error {
	if err := reportProblems(sio, "loc build", problems, rows); err != nil {
		return cli.Failed(fmt.Errorf("loc build: %d problems leave out %d of %d rows", len(problems), loc.RowsOf(problems), rows))
	}
	return nil
}

type locValidateOptions struct {
	dataset, input, output string
	limit                  int
	repos                  locRepoFlags
}

// validationReport is relace-mcp's validation report (validate --output
// FILE), under its field names.
type validationReport struct {
	TotalCases     int                `json:"total_cases"`
	ValidCases     int                `json:"valid_cases"`
	InvalidCases   int                `json:"invalid_cases"`
	ValidationRate float64            `json:"validation_rate"`
	TotalErrors    int                `json:"total_errors"`
	TotalWarnings  int                `json:"total_warnings"`
	Results        []validationResult `json:"results"`
}

type validationResult struct {
	CaseID   string   `json:"case_id"`
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

func newValidationReport(cases []loc.Case, problems []loc.Problem) validationReport {
	errs := map[string][]string{}
	for _, p := range problems {
		errs[p.ID] = append(errs[p.ID], p.Err)
	}
	r := validationReport{TotalCases: len(cases), TotalErrors: len(problems), Results: []validationResult{}}
	for _, c := range cases {
		e := errs[c.ID]
		if e == nil {
			e = []string{}
			r.ValidCases++
		}
		r.Results = append(r.Results, validationResult{CaseID: c.ID, Valid: len(e) == 0, Errors: e, Warnings: []string{}})
	}
	r.InvalidCases = r.TotalCases - r.ValidCases
	if r.TotalCases > 0 {
		r.ValidationRate = float64(r.ValidCases) / float64(r.TotalCases)
	}
	return r
}

func newLocValidateCommand(sio cli.Stdio) *cobra.Command {
	var o locValidateOptions
	cmd := &cobra.Command{
		Use:   "validate --dataset CASES.jsonl [--repos DIR] [--output REPORT.json]",
		Short: "Check every case against its repository",
		Long: `Check that each case's repository and base_commit exist, every ground-truth
file exists at base_commit, every range lies inside its file and inside its
context range, and every function is one of the file's syntax tree. Each
problem is printed with the case id; --output FILE also writes relace-mcp's
validation report (total_cases, valid_cases, invalid_cases, validation_rate,
total_errors, total_warnings, results). Without --repos the repositories
are looked for in the user cache directory's patchbench/repos.

Exit status: 0 every case is valid; 1 some are not; 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if o.dataset != "" && o.dataset != o.input {
					return cli.Usage(fmt.Errorf("loc validate: --dataset %s and --input %s differ", o.dataset, o.input))
				}
				o.dataset = o.input
			}
			if o.dataset == "" {
				return cli.Usage(errors.New("loc validate: --dataset (or --input) is required"))
			}
			if o.limit < 0 {
				return cli.Usage(fmt.Errorf("loc validate: --limit %d: want 0 (all) or more", o.limit))
			}
			if err := o.repos.resolve(); err != nil {
				return cli.Usage(fmt.Errorf("loc validate: %w", err))
			}
			cases, err := loc.ReadCases(o.dataset)
			if err != nil {
				return cli.Usage(err)
			}
			if o.limit > 0 && o.limit < len(cases) {
				cases = cases[:o.limit]
			}
			store := o.repos.store()
			defer store.Close()
			problems := loc.Validate(cmd.Context(), cases, store)
			rep := newValidationReport(cases, problems)
			fmt.Fprintf(sio.Err, "%s: %d cases, %d valid, %d with problems\n", cli.ProgramName, rep.TotalCases, rep.ValidCases, rep.InvalidCases)
			if o.output != "" {
				data, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				if err := atomicfile.Write(o.output, append(data, '\n'), 0o644); err != nil {
					return cli.Usage(fmt.Errorf("loc validate: --output: %w", err))
				}
			}
			return reportProblems(sio, "loc validate", problems, len(cases))
		},
	}
	cmd.Flags().StringVar(&o.dataset, "dataset", "", "cases `FILE` (JSONL, as loc build writes, or relace-mcp's schema)")
	cmd.Flags().StringVar(&o.input, "input", "", "another name of --dataset (relace-mcp)")
	cmd.Flags().StringVar(&o.output, "output", "", "write relace-mcp's validation report (JSON) to `FILE`")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "validate the first `N` cases only (0: all)")
	o.repos.register(cmd)
	return cmd
}

type locRunOptions struct {
	dataset, mode, indexDir string
	signals                 string
	// relace-mcp's names: -o/--output PREFIX, --search-mode, -v.
	output, searchMode string
	verbose            bool
	modeGiven          bool
	maxTurnsGiven      bool
	repos              locRepoFlags
	run                runFlags
	model              modelFlags
	// The agentic search's flags.
	maxTurns   int
	tools      []string
	promptFile string
	lsp        string
}

func (o *locRunOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", "", "cases `FILE` (JSONL, as loc build writes, or relace-mcp's schema)")
	f.StringVar(&o.mode, "mode", loc.ModeIndexed, "search `MODE`: indexed (BM25, no model) or agentic (a model with tools); default agentic when --model is given")
	f.StringVar(&o.signals, "signals", "default", "indexed: the signals fused with BM25, comma-separated `LIST` of "+strings.Join(codesearch.Signals, ", ")+"; default ("+codesearch.DefaultSignals+"), all, none, or all,-NAME to leave one out")
	f.StringVar(&o.indexDir, "index-cache", "", "`DIR` caching the indexed mode's indexes (default REPOS/.loc-index)")
	o.repos.register(cmd)
	o.model.register(f, "reference (the ground truth), replay/FILE (LocAgent loc_outputs.jsonl or relace-style answers), openai/NAME, anthropic/NAME (agentic)")
	// The runner flags, with relace-mcp's spellings: -q, and --timeout
	// also as a number of seconds.
	rf := pflag.NewFlagSet("", pflag.ContinueOnError)
	o.run.register(rf, loc.ResultsFile)
	rf.VisitAll(func(fl *pflag.Flag) {
		switch fl.Name {
		case "quiet":
			fl.Shorthand = "q"
		case "timeout":
			fl.Value = secondsValue{&o.run.timeout}
			fl.Usage += "; a number is seconds"
		case "fail-fast":
			fl.Usage = "stop after `N` cases in a row that failed or ended without an answer (relace-mcp's rule; 0: never)"
		}
		f.AddFlag(fl)
	})
	f.StringVarP(&o.output, "output", "o", "", "relace-mcp's name for the run: the run `PREFIX` is the run directory (as --out), and PREFIX.report.json a copy of its report.json")
	f.StringVar(&o.searchMode, "search-mode", "", "another name of --mode (relace-mcp)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print each case's id, quality_score and best file after the run")
	f.StringSliceVar(&o.tools, "enabled-tools", nil, "agentic: the search tools offered (comma-separated `LIST`; default view_file,view_directory,grep_search,find_symbol; report_back always is)")
	f.StringVar(&o.promptFile, "prompt-file", "", "agentic: YAML `FILE` with the system prompt, the user message ({query}) and tool descriptions (default $SEARCH_PROMPT_FILE)")
	f.StringVar(&o.lsp, "lsp-tools", loc.LSPOff, "agentic: offer a language server's definition and references tools: true, false or auto (where the server for the repository's language is on PATH)")
}

func newLocRunCommand(sio cli.Stdio) *cobra.Command {
	var o locRunOptions
	cmd := &cobra.Command{
		Use:   "run --dataset CASES.jsonl --repos DIR --out DIR [--mode indexed|agentic] [--model M]",
		Short: "Search every case and score the answers into DIR",
		Long: `Search every case, append one scored row per case to DIR/results.jsonl (the
ranked answer as "found", the scores as "metrics") and write DIR/report.json
and DIR/report.md: means overall, per category and per repository.

--mode indexed: BM25 over function-level chunks (plus one chunk per file for
the code outside functions), code-aware tokens, fused (reciprocal rank
fusion) with what the issue names: paths, module paths and traceback frames;
identifiers resolved to the files defining them; words naming files; test
files last unless the title is about tests (--signals turns each on or off;
see docs/loc.md). The index of a repository commit is built once and cached
in --index-cache; indexes past 128 MB in memory are dropped and read again.
Scores: relace-mcp's metrics as relace-mcp defines them (file_recall,
line_precision_matched, function_hit_rate: a function hit when an answer
overlaps its definition; quality_score) and LocAgent's Acc@k; report.json
holds relace-mcp's avg_ fields. --dataset may be in relace-mcp's schema
(hard_gt). -o/--output PREFIX, --search-mode, -q, -v, --timeout SECONDS,
--fail-fast N (failures in a row) and SEARCH_MAX_TURNS, SEARCH_TEMPERATURE,
SEARCH_PROMPT_FILE (environment or .env; flags win) are relace-mcp's.
The mode is agentic when --model is given, else indexed. --model reference answers
with the ground truth (a pipeline check); --model replay/FILE scores recorded
answers (LocAgent's loc_outputs.jsonl, or {"id", "files": {path: [[s, e]]}}).

--mode agentic --model openai/NAME|anthropic/NAME: the model searches with
tools that read the repository at the case's base_commit (view_file,
view_directory, grep_search, find_symbol; --enabled-tools chooses;
--lsp-tools adds a language server's definition and references) and
answers with report_back, in at most --max-turns answers. Every turn goes
through the response cache (--cache), so a rerun asks nothing.
--prompt-file replaces the system prompt, the user message ({query}) and
tool descriptions.

Exit status: 0 every case ran; 1 some cases failed (missing repository or
commit; each named in results.jsonl) or the run stopped; 2 usage or input
error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.modeGiven = cmd.Flags().Changed("mode")
			o.maxTurnsGiven = cmd.Flags().Changed("max-turns")
			return runLocRun(cmd.Context(), o, sio)
		},
	}
	o.register(cmd)
	cmd.Flags().IntVar(&o.maxTurns, "max-turns", loc.DefaultMaxTurns, "agentic: bound on the model's answers per case (default $SEARCH_MAX_TURNS, else 8)")
	return cmd
}

// options checks the flags of cmd, whose run directory is recognised by
// resultsFile (loc.ResultsFile; loc.GridFile for a grid of runs).
func (o *locRunOptions) options(cmd, resultsFile string, sio cli.Stdio) (loc.RunOptions, error) {
	if o.output != "" {
		if o.run.out != "" && o.run.out != o.output {
			return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: --out %s and --output %s differ", cmd, o.run.out, o.output))
		}
		o.run.out = o.output
	}
	if o.searchMode != "" {
		if o.modeGiven && o.mode != o.searchMode {
			return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: --mode %s and --search-mode %s differ", cmd, o.mode, o.searchMode))
		}
		o.mode = o.searchMode
	} else if !o.modeGiven && o.model.model != "" {
		// relace-mcp searches with its model by default; with no model
		// there is only the index.
		o.mode = loc.ModeAgentic
	}
	if o.dataset == "" {
		return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: --dataset is required", cmd))
	}
	if err := o.repos.resolve(); err != nil {
		return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: %w", cmd, err))
	}
	ropts, sess, err := o.run.options(cmd, resultsFile, sio)
	if err != nil {
		return loc.RunOptions{}, cli.Usage(err)
	}
	ropts.FailFastConsecutive = true
	if _, err := os.Stat(o.dataset); err != nil && hfhub.LooksLikeRef(o.dataset) {
		return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: --dataset %s: no such file; %s reads a cases file: make one from the Hub's dataset first: patchbench loc build --dataset %s --repos DIR --out cases.jsonl", cmd, o.dataset, cmd, o.dataset))
	}
	// A bad line is left out, named; the other cases run.
	cases, bad, err := loc.ReadCasesLenient(o.dataset)
	if err != nil {
		return loc.RunOptions{}, cli.Usage(err)
	}
	if err := usable(sio, cmd, o.dataset, "case", len(cases), bad); err != nil {
		return loc.RunOptions{}, err
	}
	if _, err := codesearch.ParseSignals(o.signals); err != nil {
		return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: --signals: %w", cmd, err))
	}
	idx := o.indexDir
	if idx == "" {
		idx = filepath.Join(o.repos.repos, ".loc-index")
	}
	ro := loc.RunOptions{
		Cases: cases, Dataset: o.dataset, Repos: o.repos.repos, CloneFrom: o.repos.cloneFrom,
		Out: o.run.out, Mode: o.mode, Model: o.model.model, IndexDir: idx, Signals: o.signals, Runner: ropts, Force: o.run.force, Session: sess,
	}
	if o.mode == loc.ModeAgentic && o.model.model != "reference" && !strings.HasPrefix(o.model.model, "replay/") {
		mopts, samp, err := o.model.options(cmd, o.run.out)
		if err != nil {
			return loc.RunOptions{}, cli.Usage(err)
		}
		ro.ModelOptions, ro.Temperature = mopts, samp.Temperature
		ro.MaxTurns = o.maxTurns
		// relace-mcp's settings from the environment (or the .env file
		// model.options has read); the flags win.
		if err := o.searchEnv(cmd, &ro); err != nil {
			return loc.RunOptions{}, cli.Usage(err)
		}
		agent := loc.AgentOptions{MaxTokens: samp.MaxTokens, Tools: o.tools, LSP: o.lsp}
		if o.promptFile != "" {
			if agent.Prompt, err = loc.LoadAgentPrompt(o.promptFile); err != nil {
				return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: %w", cmd, err))
			}
		}
		// Check the agent's options now: a bad tool name is a usage error,
		// not one failed case per row.
		if _, err := loc.NewAgentic(agentWith(agent, &runner.Model{}, ro)); err != nil {
			return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: %w", cmd, err))
		}
		ro.Agentic = func(ctx context.Context, ro loc.RunOptions) (loc.Searcher, func() error, error) {
			m, err := runner.OpenModel(ctx, ro.ModelOptions)
			if err != nil {
				return nil, nil, err
			}
			a, err := loc.NewAgentic(agentWith(agent, m, ro))
			if err != nil {
				m.Close()
				return nil, nil, err
			}
			return a, m.Close, nil
		}
	} else if o.mode == loc.ModeIndexed && (o.tools != nil || o.promptFile != "" || o.lsp != loc.LSPOff) {
		return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: --enabled-tools, --prompt-file and --lsp-tools are for --mode agentic", cmd))
	}
	return ro, nil
}

// searchEnv applies SEARCH_MAX_TURNS, SEARCH_TEMPERATURE and
// SEARCH_PROMPT_FILE, relace-mcp's settings, where no flag gives them.
func (o *locRunOptions) searchEnv(cmd string, ro *loc.RunOptions) error {
	if v := os.Getenv("SEARCH_MAX_TURNS"); v != "" && !o.maxTurnsGiven {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return fmt.Errorf("%s: SEARCH_MAX_TURNS=%q: want a whole number of turns, 1 or more", cmd, v)
		}
		o.maxTurns, ro.MaxTurns = n, n
	}
	if v := os.Getenv("SEARCH_TEMPERATURE"); v != "" && !o.model.given("temperature") {
		t, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || t < 0 {
			return fmt.Errorf("%s: SEARCH_TEMPERATURE=%q: want a number, 0 or more", cmd, v)
		}
		ro.Temperature = &t
	}
	if v := os.Getenv("SEARCH_PROMPT_FILE"); v != "" && o.promptFile == "" {
		o.promptFile = v
	}
	return nil
}

// agentWith is the agent of a run: the flags' options with the run's model,
// turn bound and temperature (loc grid varies the last two per run).
func agentWith(a loc.AgentOptions, m *runner.Model, ro loc.RunOptions) loc.AgentOptions {
	a.Model, a.MaxTurns, a.Temperature = m, ro.MaxTurns, ro.Temperature
	return a
}

func runLocRun(ctx context.Context, o locRunOptions, sio cli.Stdio) error {
	ro, err := o.options("loc run", loc.ResultsFile, sio)
	if err != nil {
		return err
	}
	if err := openDir(ro.Session, &ro.Runner); err != nil {
		return err
	}
	defer ro.Session.Close()
	sum, err := loc.Run(ctx, ro)
	if sum.Report != nil {
		if o.verbose {
			if verr := printCases(sio, ro.Out); verr != nil {
				err = errors.Join(err, verr)
			}
		}
		if o.output != "" {
			if cerr := copyReport(ro.Out, o.output+".report.json"); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
	}
	return finishLocRun(ctx, sio, o.run, sum, err)
}

// printCases prints one line per case of the run in dir: id, quality_score
// and the best-ranked file, or the error of a failed case.
func printCases(sio cli.Stdio, dir string) error {
	rows, err := runner.ReadRows(filepath.Join(dir, loc.ResultsFile))
	if err != nil {
		return err
	}
	for _, r := range rows {
		id, _ := r["id"].(string)
		if r["failed"] == true {
			fmt.Fprintf(sio.Err, "%s: failed: %v\n", id, r["error"])
			continue
		}
		m, _ := r["metrics"].(map[string]any)
		q, _ := m["quality_score"].(float64)
		best := "-"
		if f, ok := r["found"].(map[string]any); ok {
			if files, _ := f["files"].([]any); len(files) > 0 {
				best = fmt.Sprint(files[0])
			}
		}
		fmt.Fprintf(sio.Err, "%s: quality_score %.4f, first file %s\n", id, q, best)
	}
	return nil
}

// copyReport writes dir's report.json to path too, where relace-mcp's
// readers look for PREFIX.report.json.
func copyReport(dir, path string) error { return copyFile(filepath.Join(dir, "report.json"), path) }

// copyFile copies src to dst, atomically.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return atomicfile.Write(dst, data, 0o644)
}

// secondsValue is a duration flag that also takes a number of seconds,
// as relace-mcp's and the official SWE-bench harness's --timeout do.
type secondsValue struct{ d *time.Duration }

func (v secondsValue) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

func (v secondsValue) Set(s string) error {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return fmt.Errorf("negative timeout %s", s)
		}
		*v.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration or a number of seconds: %q", s)
	}
	*v.d = d
	return nil
}

func (v secondsValue) Type() string { return "duration" }

func finishLocRun(ctx context.Context, sio cli.Stdio, r runFlags, sum loc.RunSummary, err error) error {
	if r.dryRun {
		if err != nil {
			return exit(ctx, runner.Ending{Err: err, DryRun: true})
		}
		for _, c := range sum.Pending {
			fmt.Fprintln(sio.Out, c.ID)
		}
		fmt.Fprintf(sio.Err, "%s: dry run: %d cases selected, %d already done, %d to run\n",
			cli.ProgramName, sum.Selected, sum.Skipped, len(sum.Pending))
		return nil
	}
	if sum.Report != nil {
		fmt.Fprintf(sio.Out, "%s: %d cases", sum.Report.Title, sum.Rows)
		if tot := sum.Report.Reports[0].Total; tot.N > 0 {
			for _, m := range []string{"quality_score", "quality_score_v2", "file_acc@5", "function_acc@10"} {
				if st, ok := tot.Stats[m]; ok {
					fmt.Fprintf(sio.Out, ", %s %.4f", m, st.Value)
				}
			}
		}
		fmt.Fprintln(sio.Out)
		for _, u := range sum.Report.Unscored {
			fmt.Fprintf(sio.Err, "%s: warning: left out of the means: %s\n", cli.ProgramName, u)
		}
		fmt.Fprintf(sio.Err, "%s: %d cases run (%d failed, %d skipped as done); report in %s\n",
			cli.ProgramName, sum.Done, sum.Failed, sum.Skipped, filepath.Join(r.out, "report.md"))
		if sum.Index != nil {
			ix := sum.Index
			fmt.Fprintf(sio.Err, "%s: indexes: %d built, %d loaded from the cache, %d dropped from memory (build %s, load %s; %d queries in %s)\n",
				cli.ProgramName, ix.Built, ix.Loaded, ix.Dropped, ix.BuildTime.Round(time.Millisecond), ix.LoadTime.Round(time.Millisecond),
				ix.Queries, ix.QueryTime.Round(time.Microsecond))
		}
	}
	return exit(ctx, runner.Ending{Err: err, Started: sum.Report != nil || sum.Done > 0,
		Failures: []error{runner.FailedRows(sum.FailedRows, sum.Rows, "cases")}})
}
