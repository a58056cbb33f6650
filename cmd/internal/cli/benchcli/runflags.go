package benchcli

import (
	"context"
	"errors"
	"fmt"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/runner"
)

// The flags every benchmark's run command shares, in two groups: the
// runner's (runFlags) and the model's (modelFlags). A benchmark registers
// both and adds only its own flags; the checks between them live here.

// runFlags are the runner flags of a run command.
type runFlags struct {
	out                      string
	workers, limit, failFast int
	shuffle, dryRun, quiet   bool
	resume, retryFailed      bool
	force                    bool
	seed                     int64
	shard                    string
	timeout                  time.Duration
}

func (r *runFlags) register(f *pflag.FlagSet, resultsFile string) {
	f.StringVar(&r.out, "out", "", "run `DIR` for "+resultsFile+", reports, run.json and the response cache")
	f.BoolVar(&r.force, "force", false, "discard an existing DIR/"+resultsFile+" and start over (the cache is kept)")
	f.DurationVar(&r.timeout, "timeout", 0, "bound on each case, retries included (0: none)")
	f.IntVar(&r.workers, "workers", 8, "cases run at once")
	f.IntVar(&r.limit, "limit", 0, "run only the first `N` cases (after --shuffle); 0 for all")
	f.BoolVar(&r.shuffle, "shuffle", false, "order the cases by a hash of --seed and the case")
	f.Int64Var(&r.seed, "seed", 0, "seed of --shuffle")
	f.IntVar(&r.failFast, "fail-fast", 0, "stop after `N` failed cases (0: never)")
	f.BoolVar(&r.dryRun, "dry-run", false, "list the cases that would run (id and key), and run none")
	f.BoolVar(&r.resume, "resume", false, "continue the run in DIR: skip the cases it has recorded")
	f.BoolVar(&r.retryFailed, "retry-failed", false, "with --resume, run again the cases whose row failed")
	f.StringVar(&r.shard, "shard", "", "run part `i/n` of the cases (env/n: i from $JOB_COMPLETION_INDEX); see patchbench merge")
	f.BoolVar(&r.quiet, "quiet", false, "show no progress")
}

// options checks the runner flags of command cmd (for messages) and
// returns the runner's options and the run's session: a run directory
// already holding resultsFile needs --resume or --force, and one holding
// something else is refused (see runner.Session.Check). resultsFile "" is
// for a directory that is not itself a run (loc grid).
func (r *runFlags) options(cmd, resultsFile string, sio cli.Stdio) (runner.Options, *runner.Session, error) {
	switch {
	case r.out == "" && !r.dryRun:
		return runner.Options{}, nil, fmt.Errorf("%s: --out is required", cmd)
	case r.retryFailed && !r.resume:
		return runner.Options{}, nil, fmt.Errorf("%s: --retry-failed needs --resume", cmd)
	case r.force && r.resume:
		return runner.Options{}, nil, fmt.Errorf("%s: --force and --resume exclude each other", cmd)
	}
	shard, err := runner.ParseShard(r.shard)
	if err != nil {
		return runner.Options{}, nil, fmt.Errorf("--shard: %w", err)
	}
	switch {
	case r.workers < 1:
		return runner.Options{}, nil, fmt.Errorf("%s: --workers %d: want at least 1", cmd, r.workers)
	case r.limit < 0:
		return runner.Options{}, nil, fmt.Errorf("%s: --limit %d: want 0 (all) or more", cmd, r.limit)
	case r.failFast < 0:
		return runner.Options{}, nil, fmt.Errorf("%s: --fail-fast %d: want 0 (never) or more", cmd, r.failFast)
	}
	sess := runner.NewSession(runner.SessionOptions{
		Out: r.out, Command: cli.ProgramName + " " + cmd, ResultsFile: resultsFile,
		Resume: r.resume, Force: r.force, DryRun: r.dryRun,
	})
	if err := sess.Check(); err != nil {
		return runner.Options{}, nil, err
	}
	runGC()
	o := runner.Options{
		Workers: r.workers, PerCaseTimeout: r.timeout, Limit: r.limit, Shuffle: r.shuffle, Seed: r.seed,
		FailFast: r.failFast, DryRun: r.dryRun, Resume: r.resume, RetryFailed: r.retryFailed, Shard: shard,
	}
	switch {
	case r.dryRun:
		o.Progress = runner.Progress{Writer: sio.Out}
	case !r.quiet:
		o.Progress = runner.ProgressTo(sio.Err)
	}
	return o, sess, nil
}

// openDir takes the run directory of sess once the command's other
// inputs are checked: created when missing, refused when it holds
// something else or another process holds it (see runner.Session.Open).
// It points o at it; the caller closes sess when the run ends. A dry run
// takes nothing.
func openDir(sess *runner.Session, o *runner.Options) error {
	if err := sess.Open(o); err != nil {
		return cli.Usage(err)
	}
	return nil
}

// exit is the exit of a run command that ended as e (see runner.Ending).
func exit(ctx context.Context, e runner.Ending) error {
	switch code, err := e.Exit(ctx); code {
	case runner.ExitUsage:
		return cli.Usage(err)
	case runner.ExitFailed:
		return cli.Failed(err)
	}
	return nil
}

// modelFlags are the model flags of a run command.
type modelFlags struct {
	model, cache, envFile, baseURL string
	temperature                    float64
	maxTokens                      int
	modelSeed                      int64
	priceIn, priceOut              float64
	rpm, tpm, attempts             int
	requestTimeout                 time.Duration

	flags *pflag.FlagSet // to tell the flags given from defaults
}

// sampling holds the sampling parameters the flags ask for; nil and 0
// leave the provider's defaults.
type sampling struct {
	Temperature *float64
	MaxTokens   int
	Seed        *int64
}

func (m *modelFlags) register(f *pflag.FlagSet, models string) {
	m.flags = f
	f.StringVar(&m.model, "model", "", "`MODEL`: "+models)
	f.StringVar(&m.cache, "cache", "", "response cache `FILE` (default DIR/cache.db; off for none)")
	f.StringVar(&m.envFile, "env-file", ".env", "read API keys from this .env `FILE` when present (the environment wins)")
	f.StringVar(&m.baseURL, "base-url", "", "provider `URL` (default OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the provider's API)")
	f.Float64Var(&m.temperature, "temperature", 0, "sampling temperature (default: the provider's)")
	f.IntVar(&m.maxTokens, "max-tokens", 0, "bound on the answer's tokens (default: the provider's; 4096 for Anthropic)")
	f.Int64Var(&m.modelSeed, "model-seed", 0, "sampling seed sent to the model, where supported")
	f.Float64Var(&m.priceIn, "price-in", 0, "US dollars per million input tokens, for the cost column")
	f.Float64Var(&m.priceOut, "price-out", 0, "US dollars per million output tokens")
	f.IntVar(&m.rpm, "rpm", 0, "rate limit in requests per minute (0: none)")
	f.IntVar(&m.tpm, "tpm", 0, "rate limit in tokens per minute (0: none)")
	f.IntVar(&m.attempts, "attempts", 6, "calls per model request including retries of 429s, 5xx, timeouts and broken answers")
	f.DurationVar(&m.requestTimeout, "request-timeout", llm.DefaultTimeout, "bound on each attempt of a model call")
}

// options checks the model flags of command cmd, reads the .env file, and
// returns the options of runner.OpenModel (Dir set to out) and the
// sampling parameters.
func (m *modelFlags) options(cmd, out string) (runner.ModelOptions, sampling, error) {
	var s sampling
	if m.model == "" {
		return runner.ModelOptions{}, s, fmt.Errorf("%s: --model is required", cmd)
	}
	if err := checkModelName(m.model); err != nil {
		return runner.ModelOptions{}, s, err
	}
	llmOpts, err := m.llmOptions()
	if err != nil {
		return runner.ModelOptions{}, s, err
	}
	o := runner.ModelOptions{Model: m.model, Cache: m.cache, Dir: out, LLM: llmOpts}
	if m.priceIn != 0 || m.priceOut != 0 {
		o.LLM.Price = &llm.Price{InputPerMillion: m.priceIn, OutputPerMillion: m.priceOut}
	}
	s.MaxTokens = m.maxTokens
	if m.given("temperature") {
		s.Temperature = &m.temperature
	}
	if m.given("model-seed") {
		s.Seed = &m.modelSeed
	}
	return o, s, nil
}

// llmOptions reads the .env file and returns the network options the
// flags give: base URL, per-attempt timeout, attempts, rate limits.
func (m *modelFlags) llmOptions() (llm.Options, error) {
	if err := llm.LoadDotEnv(m.envFile); err != nil && (m.given("env-file") || !errors.Is(err, fs.ErrNotExist)) {
		return llm.Options{}, err
	}
	return llm.Options{
		BaseURL: m.baseURL,
		Timeout: m.requestTimeout,
		Retry:   llm.RetryPolicy{MaxAttempts: m.attempts},
		Limits:  llm.Limits{RequestsPerMinute: m.rpm, TokensPerMinute: m.tpm},
	}, nil
}

// embedOptions checks --embed-model's name and returns the options of
// runner.OpenEmbedder: the network flags of the chat model, and the
// vector cache file cacheFile unless --cache is off.
func (m *modelFlags) embedOptions(embedModel, cacheFile string) (runner.ModelOptions, error) {
	if p, name := llm.SplitModel(embedModel); p != llm.ProviderOpenAI || name == "" {
		return runner.ModelOptions{}, fmt.Errorf("--embed-model %q: want openai/NAME (any OpenAI-compatible embeddings endpoint)", embedModel)
	}
	o, err := m.llmOptions()
	if err != nil {
		return runner.ModelOptions{}, err
	}
	if m.cache == runner.CacheOff {
		cacheFile = runner.CacheOff
	}
	return runner.ModelOptions{Model: embedModel, Cache: cacheFile, LLM: o}, nil
}

func (m *modelFlags) given(name string) bool { return m.flags != nil && m.flags.Changed(name) }

// checkModelName refuses model names New would refuse, and replay files
// that cannot be opened, before any work.
func checkModelName(model string) error {
	provider, name := llm.SplitModel(model)
	switch provider {
	case llm.ProviderOpenAI, llm.ProviderAnthropic, llm.ProviderReplay:
		if name == "" {
			return fmt.Errorf("--model %q names no model (want %s/NAME)", model, provider)
		}
		if provider == llm.ProviderReplay {
			// Opened now, before the run directory is made: a missing
			// replay file is an input error that changes nothing. (Its
			// rows are read by the benchmark's own replay reader.)
			f, err := os.Open(name)
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			f.Close()
		}
	case llm.ProviderReference:
		if name != "" {
			return fmt.Errorf("--model: unknown model %q (did you mean reference?)", model)
		}
	default:
		return fmt.Errorf("--model: unknown provider %q (want openai/, anthropic/, replay/ or reference)", provider)
	}
	return nil
}

// runGC sets the garbage collector for a benchmark run, unless $GOGC or
// $GOMEMLIMIT say otherwise. A run holds little (the cases in flight) and
// allocates much (prompts, answers, rows): with Go's default target, twice
// the live heap, the collector ran 1,905 times in a 15,000-case Diff-XYZ
// run and took a fifth of its time. A ballast, 96 MiB allocated and never
// touched (so never resident), counts as live heap: the collector then
// runs about every 100 MB allocated, and the peak is about 200 MB plus
// twice what the run holds, whatever the number of cases. (GOGC=400 did as
// well for speed, but multiplied what grows with the run by five.)
func runGC() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" && gcBallast == nil {
		gcBallast = make([]byte, 96<<20)
	}
}

// gcBallast is runGC's ballast, kept for the life of the process.
var gcBallast []byte

// warnLeftOut names on stderr each dataset row a lenient reader left out:
// bad rows are skipped, never silently.
func warnLeftOut[E any](sio cli.Stdio, bad []E) {
	for _, b := range bad {
		fmt.Fprintf(sio.Err, "%s: warning: left out: %v\n", cli.ProgramName, b)
	}
}

// usable names the rows left out and refuses a dataset with none left
// (exit 2): what every run command does after its lenient read.
func usable(sio cli.Stdio, cmd, dataset, what string, n int, bad []error) error {
	warnLeftOut(sio, bad)
	if n == 0 {
		return cli.Usage(fmt.Errorf("%s: %s: no usable %s", cmd, dataset, what))
	}
	return nil
}

// acceptSpellings makes f accept a seed tool's flag spellings (APE-Bench's
// and Eleanstic's --n_responses, --max_workers, ...) as aliases of its own
// flags, as the design asks: aliases maps each spelling to the flag name.
func acceptSpellings(f *pflag.FlagSet, aliases map[string]string) {
	prev := f.GetNormalizeFunc()
	f.SetNormalizeFunc(func(fs *pflag.FlagSet, name string) pflag.NormalizedName {
		if to, ok := aliases[name]; ok {
			name = to
		}
		return prev(fs, name)
	})
}
