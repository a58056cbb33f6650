package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrInput is wrapped by errors about a run's inputs that only the user
// can fix: a dataset or option that cannot be used. Commands exit 2 on it
// (see [Ending]).
var ErrInput = errors.New("input error")

// SessionOptions say how a run takes its run directory.
type SessionOptions struct {
	// Out is the run directory.
	Out string
	// Command names the holder in the lock file (see DirOptions.Command).
	Command string
	// ResultsFile is the name of the results file in Out.
	ResultsFile string
	// Resume continues the run in Out; Force starts it over (its results
	// are removed when the run is recorded; the response cache is kept).
	// Without either, a run directory whose results file has rows is
	// refused.
	Resume, Force bool
	// DryRun takes and writes nothing.
	DryRun bool
	// MayChange are the run.json fields a resume may change besides
	// "started" and "limit": paths of inputs compared by their hashes,
	// worker counts (see [RecordRun]).
	MayChange []string
}

// Session is one run's hold on its run directory, in the order a run
// command goes: [Session.Check] refuses an --out that cannot hold the run
// before any input is read; [Session.Open] takes and locks it once the
// inputs are good; [Session.Record] writes run.json (refusing a resume of
// another run, and clearing the results of the run before with Force)
// when the run is about to start; [Session.Close] lets it go. The run
// itself (Options.Out and Options.Dir, which Open sets) writes the
// results file and plan.json, and [Ending] turns how it ended into the
// exit status.
//
// A library call given no session makes one it does not open: the run
// then takes the directory's lock for its own length (see Options.Dir).
type Session struct {
	SessionOptions
	dir *Dir
}

// NewSession returns the session of a run with options o; it takes
// nothing yet.
func NewSession(o SessionOptions) *Session { return &Session{SessionOptions: o} }

func (s *Session) dirOptions() DirOptions {
	return DirOptions{Command: s.Command, ResultsFile: s.ResultsFile, Resume: s.Resume, Force: s.Force}
}

// Check refuses, changing nothing, a run directory that cannot hold the
// run (see [CheckDir]): for a command that reads its inputs before it
// takes the directory. A dry run, or a session without a results file
// (a directory of runs, not a run), checks nothing.
func (s *Session) Check() error {
	if s.DryRun || s.ResultsFile == "" {
		return nil
	}
	return CheckDir(s.Out, s.dirOptions())
}

// Open takes the run directory for this process (see [OpenDir]) and
// points o at it: o.Out is the results file, o.Dir the directory held. A
// dry run takes nothing and sets o.Out only when Out is given.
func (s *Session) Open(o *Options) error {
	if s.Out != "" {
		o.Out = s.Results()
	}
	if s.DryRun {
		return nil
	}
	d, err := OpenDir(s.Out, s.dirOptions())
	if err != nil {
		return err
	}
	s.dir, o.Dir = d, d
	return nil
}

// Dir is the run directory held, nil before Open (or for a dry run).
func (s *Session) Dir() *Dir { return s.dir }

// Results is the path of the results file.
func (s *Session) Results() string { return filepath.Join(s.Out, s.ResultsFile) }

// Record writes info (a value that marshals to a JSON object) as run.json
// once the run is about to start, creating Out when missing: with Resume,
// the run recorded must be the same (see [RecordRun]); with Force, the
// results of the run before are removed first, so that nothing is lost
// by a run refused earlier. A dry run records nothing.
func (s *Session) Record(info any) error {
	if s.DryRun {
		return nil
	}
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if s.Force && !s.Resume {
		if err := os.Remove(s.Results()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("runner: %w", err)
		}
	}
	return RecordRun(s.Out, info, s.Resume, s.MayChange...)
}

// Close releases the run directory (see [Dir.Release]). It may be called
// on a nil session and more than once.
func (s *Session) Close() {
	if s != nil {
		s.dir.Release()
	}
}

// Exit statuses of a run command.
const (
	// ExitOK: the run ran to its end and every case succeeded.
	ExitOK = 0
	// ExitFailed: cases failed, or the run was interrupted or broke off.
	ExitFailed = 1
	// ExitUsage: the options, the inputs or the run directory cannot be
	// used; nothing was run.
	ExitUsage = 2
)

// Ending is how a run ended; [Ending.Exit] classifies it. Every run
// command ends through it, so that the same ending gets the same exit
// status and hint in every benchmark.
type Ending struct {
	// Err is the run's error; nil when it ran to its end.
	Err error
	// DryRun: the run listed its cases and ran none; any error is about
	// the inputs.
	DryRun bool
	// Started is set once the run recorded something (a case done, a
	// report written): an error before that which is no interruption is
	// about the inputs.
	Started bool
	// Typed says that the run's errors about its inputs all wrap
	// [ErrInput] or [ErrRunDir], so that Started need not tell them from
	// the others.
	Typed bool
	// Failures are why a run that ended did not succeed (rows that
	// failed, candidates not evaluated), in the order they are told; nil
	// ones are skipped.
	Failures []error
}

// Exit returns the exit status of the run and the error to tell (nil
// with ExitOK):
//   - ExitUsage for an error wrapping ErrInput or ErrRunDir, any error of
//     a dry run, and, unless Typed, an error before the run started that
//     is no interruption (ctx done) or fail-fast stop;
//   - ExitFailed for any other error, with a hint to resume when the run
//     was interrupted or stopped by fail-fast;
//   - ExitFailed for the first failure;
//   - ExitOK otherwise.
func (e Ending) Exit(ctx context.Context) (int, error) {
	err := e.Err
	if err != nil {
		interrupted := ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
		stopped := interrupted || errors.Is(err, ErrFailFast)
		switch {
		case e.DryRun, errors.Is(err, ErrInput), errors.Is(err, ErrRunDir):
			return ExitUsage, err
		case !e.Started && !e.Typed && !stopped:
			return ExitUsage, err
		case stopped:
			return ExitFailed, fmt.Errorf("%w; continue with --resume", err)
		}
		return ExitFailed, err
	}
	for _, f := range e.Failures {
		if f != nil {
			return ExitFailed, f
		}
	}
	return ExitOK, nil
}

// FailedRows is the failure of a run whose results hold failed rows
// (nil for none): n of rows what (cases, candidates) failed, and how to
// run them again.
func FailedRows(n, rows int, what string) error {
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d %s failed; run again with --resume --retry-failed", n, rows, what)
}
