package benchcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
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
	"github.com/patchbench/patchbench/runner"
)

type locRunOptions struct {
	dataset, mode, indexDir string
	signals                 string
	embedModel              string
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
	// Hidden: Go profiles of the run, to see where a cold run's time
	// and memory go (go tool pprof FILE).
	cpuProfile, memProfile string
}

func (o *locRunOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", "", "cases `FILE` (JSONL, as loc build writes, or relace-mcp's schema)")
	f.StringVar(&o.mode, "mode", loc.ModeIndexed, "search `MODE`: indexed (BM25, no model) or agentic (a model with tools); default agentic when --model is given")
	f.StringVar(&o.signals, "signals", "default", "indexed: the signals fused with BM25, comma-separated `LIST` of "+strings.Join(codesearch.Signals, ", ")+"; default ("+codesearch.DefaultSignals+"), all, none, or all,-NAME to leave one out")
	f.StringVar(&o.embedModel, "embed-model", "", "indexed: add a dense retriever: `MODEL` openai/NAME of an OpenAI-compatible embeddings endpoint (--base-url, else OPENAI_BASE_URL; OPENAI_API_KEY), its vectors cached in --index-cache's embeddings.db (default: none, no model)")
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
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE`")
	f.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile (allocations) at the run's end to `FILE`")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
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
in --index-cache; indexes past 32 MB in memory are dropped and read again.
--embed-model openai/NAME adds a dense retriever: the query and every chunk
embedded by an OpenAI-compatible embeddings endpoint (--base-url or
OPENAI_BASE_URL, OPENAI_API_KEY; --attempts, --request-timeout, --rpm),
chunks ranked by cosine similarity and fused like the signals; the vectors
are cached by text in --index-cache's embeddings.db (--cache off: none).
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
	if o.embedModel != "" {
		if o.mode != loc.ModeIndexed || o.model.model != "" {
			return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: --embed-model is for --mode indexed, without --model", cmd))
		}
		if ro.Embed, err = o.model.embedOptions(o.embedModel, filepath.Join(idx, "embeddings.db")); err != nil {
			return loc.RunOptions{}, cli.Usage(fmt.Errorf("%s: %w", cmd, err))
		}
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
	stop, err := startProfiles(o.cpuProfile, o.memProfile)
	if err != nil {
		return cli.Usage(fmt.Errorf("loc run: %w", err))
	}
	sum, err := loc.Run(ctx, ro)
	if perr := stop(); perr != nil {
		err = errors.Join(err, perr)
	}
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

// startProfiles starts a CPU profile into cpu and returns the function
// that ends it and writes the heap profile into mem (either may be "").
func startProfiles(cpu, mem string) (stop func() error, err error) {
	var f *os.File
	if cpu != "" {
		if f, err = os.Create(cpu); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile %s: %w", cpu, err)
		}
	}
	return func() error {
		var errs []error
		if f != nil {
			pprof.StopCPUProfile()
			errs = append(errs, f.Close())
		}
		if mem != "" {
			var buf bytes.Buffer
			if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
				errs = append(errs, fmt.Errorf("--memprofile: %w", err))
			} else if err := atomicfile.Write(mem, buf.Bytes(), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("--memprofile: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
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
			fmt.Fprintf(sio.Err, "%s: indexes: %d built, %d loaded from the cache, %d dropped from memory (build %s, load %s; %d queries in %s); files: %d chunked, %d reused from other commits\n",
				cli.ProgramName, ix.Built, ix.Loaded, ix.Dropped, ix.BuildTime.Round(time.Millisecond), ix.LoadTime.Round(time.Millisecond),
				ix.Queries, ix.QueryTime.Round(time.Microsecond), ix.Chunked, ix.Reused)
		}
	}
	return exit(ctx, runner.Ending{Err: err, Started: sum.Report != nil || sum.Done > 0,
		Failures: []error{runner.FailedRows(sum.FailedRows, sum.Rows, "cases")}})
}
