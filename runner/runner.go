package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"
	"unicode/utf8"
)

// Case is one work item.
type Case struct {
	// ID names the case for people, for example a dataset instance id. It is
	// written to the results row and need not be unique.
	ID string
	// Key identifies the work item and must be unique among the cases of a
	// run, for example "instance|task|format|prompt". Sharding, shuffling
	// and resuming all go by Key.
	Key string
	// Data is the caller's payload. The runner passes it to the [Func]
	// untouched and never writes it.
	Data any
}

// Usage is what producing a result cost.
type Usage struct {
	// Tokens is the number of model tokens spent, input and output.
	Tokens int64
	// Cost is the money spent, in US dollars.
	Cost float64
}

// Result is the outcome of one case. It must marshal with encoding/json to a
// JSON object (a struct or a map with string keys) whose fields become the
// case's row in the results file. The field names key, id, failed, error and
// elapsed_ms belong to the runner; a result that uses one, or that does not
// marshal to an object, stops the run with an error.
type Result interface {
	// Usage reports the tokens and money spent on the case; the runner
	// totals them for progress and the [Summary].
	Usage() Usage
}

// Incomplete is implemented by a Result that may report a case which ran
// without error but did not complete (an agent that ended without its
// answer). With FailFastConsecutive such a case counts as a failure in a
// row, as relace-mcp's --fail-fast counts its partial cases; it is not a
// failed row and not counted by FailFast alone.
type Incomplete interface {
	Incomplete() bool
}

// Func does the work of one case. It should return promptly once ctx is
// done, with an error.
//
// An error marks the case as failed: its row gets failed=true and the error
// text, together with the fields of the result if the result is not nil, so
// that a failed row can still carry the dimensions a report groups by. A
// panic in Func is recovered and recorded as an error. An error returned
// after the run itself was cancelled is not recorded (see the package
// documentation).
type Func func(ctx context.Context, c Case) (Result, error)

// Options configure a run. The zero value runs every case on one worker, but
// Out must be set unless DryRun is.
type Options struct {
	// Out is the results file (results.jsonl). Its directory is created
	// when missing. Without Resume, a non-empty Out is an error, so a run
	// never mixes its rows into another run's file by accident.
	Out string
	// Workers is the number of cases run at the same time; values below 1
	// mean 1.
	Workers int
	// PerCaseTimeout bounds each call of the Func; 0 means no bound. A case
	// that exceeds it has its context cancelled and is recorded as failed
	// with the Func's error.
	PerCaseTimeout time.Duration
	// Limit keeps only the first Limit selected cases; 0 means all.
	Limit int
	// Shuffle orders the cases by a hash of Seed and the key (see the
	// package documentation) instead of the order given.
	Shuffle bool
	// Seed is the shuffle seed.
	Seed int64
	// FailFast stops the run once this many cases of the run have failed;
	// 0 never stops. No case is started after the limit is reached; cases
	// already running finish and are recorded, so with several workers the
	// count of failures can end above the limit.
	FailFast int
	// FailFastConsecutive counts for FailFast only failures in a row, in
	// the order the cases are recorded: a case that succeeds starts the
	// count again, an [Incomplete] one adds to it (relace-mcp's
	// --fail-fast).
	FailFastConsecutive bool
	// DryRun selects the cases, writes their list to Progress.Writer (one
	// "id<TAB>key" line each) and runs none. Out is read when Resume is set
	// and never written.
	DryRun bool
	// Resume continues the run recorded in Out: cases with a row there are
	// skipped.
	Resume bool
	// RetryFailed, with Resume, runs again the cases whose last row in Out
	// failed. Their new rows are appended; readers take the last row of a
	// key (as [ReadRows] does).
	RetryFailed bool
	// Shard selects a part of the cases; the zero value selects all.
	Shard Shard
	// Progress says where and how progress is shown.
	Progress Progress
	// Dir, when set, is the run directory the caller holds (see
	// [OpenDir]); without it, Run takes the lock of Out's directory
	// itself for the length of the run, so that two processes never
	// append to one results file.
	Dir *Dir
}

// Summary tells what a run did.
type Summary struct {
	// Selected is the number of cases after Limit and sharding.
	Selected int
	// Skipped is the number of selected cases that were already recorded
	// and not run (Resume).
	Skipped int
	// Planned is the number of cases the run set out to run.
	Planned int
	// Pending lists them, in order, for [Plan] and dry runs; a run that
	// runs them does not hold them (see [RunList]).
	Pending []Case
	// Done is the number of cases finished and recorded by this run.
	Done int
	// Failed is the number of those that failed.
	Failed int
	// Tokens and Cost total the [Usage] of the recorded cases.
	Tokens int64
	Cost   float64
	// Elapsed is the wall time of the run.
	Elapsed time.Duration
}

// Remaining returns the number of pending cases the run did not record.
func (s Summary) Remaining() int { return s.Planned - s.Done }

// CaseList is a run's cases, made when they are due, so that a run of
// many cases holds the ones in flight only (see [RunList]). Case(i) must
// return the same case every time.
type CaseList interface {
	Len() int
	Case(i int) Case
}

// Cases is a CaseList of cases already made.
type Cases []Case

func (cs Cases) Len() int        { return len(cs) }
func (cs Cases) Case(i int) Case { return cs[i] }

// ErrFailFast is wrapped by the error [Run] returns when it stopped because
// Options.FailFast cases failed.
var ErrFailFast = errors.New("too many failed cases")

// Plan selects the cases a run with opts would run, without running any and
// without changing Out. The returned Summary has Selected, Skipped, Planned
// and Pending set.
func Plan(cases []Case, opts Options) (Summary, error) { return PlanList(Cases(cases), opts) }

// PlanList is Plan over a CaseList.
func PlanList(cases CaseList, opts Options) (Summary, error) {
	var done map[string]bool
	if opts.Resume && opts.Out != "" {
		st, err := readState(opts.Out)
		if err != nil {
			return Summary{}, err
		}
		done = st.failed
	}
	s, pending, err := plan(cases, opts, done)
	if err != nil {
		return s, err
	}
	s.Pending = make([]Case, len(pending))
	for j, i := range pending {
		s.Pending[j] = cases.Case(int(i))
	}
	return s, nil
}

// plan applies shard, shuffle, limit and the resume set (key → last row
// failed) to cases, and returns the indexes of the cases to run, in order.
func plan(cases CaseList, opts Options, done map[string]bool) (Summary, []int32, error) {
	if err := validate(cases, opts); err != nil {
		return Summary{}, nil, err
	}
	n := cases.Len()
	// Shuffle and limit choose the run's cases; the shard then takes its
	// part of them by key alone, so that the shards of a run hold exactly
	// the cases the run without --shard would, each once.
	sel := make([]int32, n)
	for i := range sel {
		sel[i] = int32(i)
	}
	if opts.Shuffle {
		shuffle(cases, sel, opts.Seed)
	}
	if opts.Limit > 0 && len(sel) > opts.Limit {
		sel = sel[:opts.Limit]
	}
	if opts.Shard.Count > 1 {
		part := sel[:0]
		for _, i := range sel {
			if opts.Shard.Contains(cases.Case(int(i)).Key) {
				part = append(part, i)
			}
		}
		sel = part
	}
	s := Summary{Selected: len(sel)}
	pending := sel[:0]
	for _, i := range sel {
		if len(done) > 0 {
			failed, recorded := done[cases.Case(int(i)).Key]
			if recorded && !(opts.RetryFailed && failed) {
				s.Skipped++
				continue
			}
		}
		pending = append(pending, i)
	}
	s.Planned = len(pending)
	return s, slices.Clip(pending), nil
}

// validate checks the options and that the keys are unique and valid. It
// sorts a 128-bit hash of each key, not the keys.
func validate(cases CaseList, opts Options) error {
	if err := opts.Shard.validate(); err != nil {
		return err
	}
	if opts.Limit < 0 {
		return fmt.Errorf("runner: negative limit %d", opts.Limit)
	}
	if opts.FailFast < 0 {
		return fmt.Errorf("runner: negative fail-fast count %d", opts.FailFast)
	}
	n := cases.Len()
	if n > math.MaxInt32 {
		return fmt.Errorf("runner: %d cases, more than %d", n, math.MaxInt32)
	}
	type keyed struct {
		h keyHash
		i int32
	}
	hashes := make([]keyed, 0, n)
	for i := range n {
		c := cases.Case(i)
		if c.Key == "" {
			return fmt.Errorf("runner: case %d (id %q): empty key", i, c.ID)
		}
		if !utf8.ValidString(c.Key) {
			return fmt.Errorf("runner: case %d (id %q): key %q is not valid UTF-8", i, c.ID, c.Key)
		}
		hashes = append(hashes, keyed{hashKey(c.Key), int32(i)})
	}
	slices.SortFunc(hashes, func(a, b keyed) int {
		if c := bytes.Compare(a.h[:], b.h[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	for j := 1; j < len(hashes); j++ {
		a, b := hashes[j-1], hashes[j]
		if a.h == b.h && cases.Case(int(a.i)).Key == cases.Case(int(b.i)).Key {
			return fmt.Errorf("runner: cases %d and %d share the key %q", a.i, b.i, cases.Case(int(b.i)).Key)
		}
	}
	return nil
}

// Run runs fn on the cases selected by opts and appends a row for each
// finished case to opts.Out. See the package documentation for the
// selection, the results file and cancellation.
//
// Cases that fail do not make Run return an error; they are counted in the
// Summary. Run returns an error when the options or cases are invalid, when
// Out cannot be read or written, when a result cannot be encoded, when ctx
// is cancelled (wrapping its cause), and when FailFast stopped the run
// (wrapping [ErrFailFast]). The Summary is valid in every case.
func Run(ctx context.Context, cases []Case, fn Func, opts Options) (Summary, error) {
	return RunList(ctx, Cases(cases), fn, opts)
}

// RunList is Run over a CaseList: a case is made when it is dispatched and
// dropped when its row is written, so that the memory of a run of any size
// is that of the cases in flight, plus four bytes a case for the plan.
func RunList(ctx context.Context, cases CaseList, fn Func, opts Options) (Summary, error) {
	start := time.Now()
	if opts.DryRun {
		s, err := PlanList(cases, opts)
		if err != nil {
			return s, err
		}
		if w := opts.Progress.Writer; w != nil {
			for _, c := range s.Pending {
				if _, err := fmt.Fprintf(w, "%s\t%s\n", c.ID, c.Key); err != nil {
					return s, fmt.Errorf("runner: writing dry-run list: %w", err)
				}
			}
		}
		return s, nil
	}
	if fn == nil {
		return Summary{}, errors.New("runner: nil case function")
	}
	if opts.Out == "" {
		return Summary{}, errors.New("runner: no results file (Options.Out)")
	}
	if err := validate(cases, opts); err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(filepath.Dir(opts.Out), 0o755); err != nil {
		return Summary{}, fmt.Errorf("runner: %w", err)
	}
	if opts.Dir == nil {
		l, err := lockDir(filepath.Dir(opts.Out))
		if err == nil {
			err = writeHolder(l, "")
			defer l.Release()
		}
		if err != nil {
			return Summary{}, err
		}
	}
	rf, err := openResults(opts.Out, opts.Resume)
	if err != nil {
		return Summary{}, err
	}
	defer rf.close()
	s, pending, err := plan(cases, opts, rf.state.failed)
	if err != nil {
		return s, err
	}
	// How many cases the run holds when whole: merge refuses a shard
	// that has fewer (a run killed or stopped before its end).
	if err := writePlan(filepath.Dir(opts.Out), planInfo{Selected: s.Selected, Shard: opts.Shard.String()}); err != nil {
		return s, err
	}

	workers := max(opts.Workers, 1)
	e := &engine{
		fn:       fn,
		opts:     opts,
		file:     rf,
		slots:    make(chan struct{}, workers),
		outcomes: make(chan outcome, workers),
		stop:     make(chan struct{}),
		progress: newProgress(opts.Progress),
		summary:  &s,
		start:    start,
		cases:    cases,
		pending:  pending,
	}
	for range workers {
		e.slots <- struct{}{}
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.runCtx, e.cancel = runCtx, cancel

	e.progress.begin(s.Planned, s.Skipped)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		e.collect()
	}()
	e.dispatch()
	e.workers.Wait()
	close(e.outcomes)
	<-collected
	s.Elapsed = time.Since(start)

	switch {
	case e.fatal != nil:
		err = e.fatal
	case e.failFast:
		what := "failed cases"
		if e.opts.FailFastConsecutive {
			what = "failed cases in a row"
		}
		err = fmt.Errorf("runner: stopped after %d %s with %d of %d left: %w",
			e.failFastAt, what, s.Remaining(), s.Planned, ErrFailFast)
	case ctx.Err() != nil && s.Remaining() > 0:
		err = fmt.Errorf("runner: interrupted with %d of %d cases left: %w",
			s.Remaining(), s.Planned, context.Cause(ctx))
	}
	e.progress.end(e.snapshot(), err != nil)
	if cerr := rf.close(); cerr != nil && err == nil {
		err = cerr
	}
	return s, err
}

// outcome is one finished call of the Func.
type outcome struct {
	c       Case
	res     Result
	err     error
	elapsed time.Duration
	// record is false when the case was interrupted: it is not written and
	// runs again on resume.
	record bool
}

// engine is the state of one Run.
type engine struct {
	fn     Func
	opts   Options
	file   *resultsFile
	runCtx context.Context
	cancel context.CancelCauseFunc
	// slots holds one token per idle worker. The collector returns a token
	// only after it has written the row and counted the outcome, so the
	// dispatcher sees every failure before it starts another case.
	slots    chan struct{}
	outcomes chan outcome
	workers  sync.WaitGroup
	// stop is closed by the collector to end dispatch (fail-fast, fatal
	// error).
	stop     chan struct{}
	progress progress
	start    time.Time
	cases    CaseList
	pending  []int32 // indexes into cases, in order

	// Owned by the collector until it returns.
	summary  *Summary
	fatal    error
	failFast bool
	// inARow counts the failures recorded since the last success;
	// failFastAt is the count that stopped the run.
	inARow, failFastAt int
	halted             bool
}

// dispatch starts the pending cases, one per free worker slot, until they
// run out or the run is stopped.
func (e *engine) dispatch() {
	for _, i := range e.pending {
		select {
		case <-e.slots:
		case <-e.stop:
			return
		case <-e.runCtx.Done():
			return
		}
		// A slot and a stop or cancellation can be ready together; stopping
		// wins.
		select {
		case <-e.stop:
			return
		case <-e.runCtx.Done():
			return
		default:
		}
		e.workers.Add(1)
		go e.work(e.cases.Case(int(i)))
	}
}

// work runs the Func on one case and hands the outcome to the collector.
func (e *engine) work(c Case) {
	defer e.workers.Done()
	ctx := e.runCtx
	if d := e.opts.PerCaseTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	begin := time.Now()
	res, err := call(ctx, e.fn, c)
	o := outcome{c: c, res: res, err: err, elapsed: time.Since(begin), record: true}
	if err != nil {
		switch {
		case e.runCtx.Err() != nil:
			o.record = false
		case ctx.Err() != nil:
			o.err = fmt.Errorf("timed out after %v: %w", e.opts.PerCaseTimeout, err)
		}
	}
	e.outcomes <- o
}

// call calls fn, turning a panic into an error.
func call(ctx context.Context, fn Func, c Case) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return fn(ctx, c)
}

// collect is the single writer: it takes outcomes as they come, writes the
// recorded ones in batches, counts them and frees their worker slots.
func (e *engine) collect() {
	var buf []byte
	var batch []outcome
	for o := range e.outcomes {
		batch = append(batch[:0], o)
	drain:
		for {
			select {
			case o, ok := <-e.outcomes:
				if !ok {
					break drain
				}
				batch = append(batch, o)
			default:
				break drain
			}
		}
		e.writeBatch(batch, &buf)
		for range batch {
			e.slots <- struct{}{}
		}
	}
}

// writeBatch writes and counts the recorded outcomes of batch.
func (e *engine) writeBatch(batch []outcome, buf *[]byte) {
	if e.fatal != nil {
		return
	}
	*buf = (*buf)[:0]
	var rows []outcome
	for _, o := range batch {
		if !o.record {
			continue
		}
		var err error
		*buf, err = appendRow(*buf, o)
		if err != nil {
			e.abort(fmt.Errorf("runner: case %q: %w", o.c.Key, err))
			return
		}
		rows = append(rows, o)
	}
	if len(rows) == 0 {
		return
	}
	if err := e.file.append(*buf); err != nil {
		e.abort(err)
		return
	}
	s := e.summary
	for _, o := range rows {
		s.Done++
		if o.err != nil {
			s.Failed++
			e.inARow++
		} else if inc, ok := o.res.(Incomplete); ok && inc.Incomplete() {
			e.inARow++
		} else {
			e.inARow = 0
		}
		if o.res != nil {
			u := o.res.Usage()
			s.Tokens += u.Tokens
			s.Cost += u.Cost
		}
	}
	failed := s.Failed
	if e.opts.FailFastConsecutive {
		failed = e.inARow
	}
	if e.opts.FailFast > 0 && failed >= e.opts.FailFast && !e.halted {
		e.failFast, e.failFastAt = true, failed
		e.halt()
	}
	e.progress.update(e.snapshot())
}

// abort stops the run for an error that makes going on pointless: nothing
// more is started or written, and running cases are cancelled.
func (e *engine) abort(err error) {
	e.fatal = err
	e.halt()
	e.cancel(err)
}

// halt ends dispatch; only the collector calls it.
func (e *engine) halt() {
	if !e.halted {
		e.halted = true
		close(e.stop)
	}
}

// snapshot returns the progress counters; only the collector (or Run after
// the collector has returned) calls it.
func (e *engine) snapshot() snapshot {
	s := e.summary
	return snapshot{
		total:   s.Planned,
		done:    s.Done,
		failed:  s.Failed,
		tokens:  s.Tokens,
		cost:    s.Cost,
		elapsed: time.Since(e.start),
	}
}
