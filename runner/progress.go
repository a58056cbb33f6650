package runner

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Progress says where and how a run shows its progress.
type Progress struct {
	// Writer receives the progress display; nil shows nothing.
	Writer io.Writer
	// Terminal selects a live progress bar (done/total, rate, ETA, tokens,
	// cost) redrawn in place. Without it, progress is plain log lines.
	Terminal bool
	// Every prints a plain line each time this many more cases are done;
	// 0 means about every tenth of the run.
	Every int
	// Interval also prints a plain line when a case finishes this long
	// after the last line; 0 means 30 seconds.
	Interval time.Duration
}

// ProgressTo returns the progress settings for showing progress on w: a bar
// when w is a terminal, plain lines otherwise.
func ProgressTo(w io.Writer) Progress {
	p := Progress{Writer: w}
	if f, ok := w.(*os.File); ok {
		fd := f.Fd()
		p.Terminal = isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
	}
	return p
}

// snapshot is the state of a run at one moment.
type snapshot struct {
	total, done, failed int
	tokens              int64
	cost                float64
	elapsed             time.Duration
}

// rate returns cases per second.
func (s snapshot) rate() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.done) / s.elapsed.Seconds()
}

// eta returns the expected time to finish, or 0 when unknown.
func (s snapshot) eta() time.Duration {
	r := s.rate()
	if r == 0 {
		return 0
	}
	return time.Duration(float64(s.total-s.done) / r * float64(time.Second))
}

// progress shows the progress of a run. The collector goroutine calls
// update; begin and end are called before and after it runs.
type progress interface {
	begin(total, skipped int)
	update(s snapshot)
	end(s snapshot, stopped bool)
}

func newProgress(p Progress) progress {
	switch {
	case p.Writer == nil:
		return noProgress{}
	case p.Terminal:
		return &barProgress{w: p.Writer}
	}
	return &lineProgress{w: p.Writer, every: p.Every, interval: p.Interval}
}

type noProgress struct{}

func (noProgress) begin(int, int)     {}
func (noProgress) update(snapshot)    {}
func (noProgress) end(snapshot, bool) {}

// lineProgress prints plain lines.
type lineProgress struct {
	w        io.Writer
	every    int
	interval time.Duration
	lastDone int
	lastTime time.Time
}

func (p *lineProgress) begin(total, skipped int) {
	if p.every <= 0 {
		p.every = max(1, (total+9)/10)
	}
	if p.interval <= 0 {
		p.interval = 30 * time.Second
	}
	p.lastTime = time.Now()
	msg := fmt.Sprintf("runner: %d cases to run", total)
	if skipped > 0 {
		msg += fmt.Sprintf(" (%d already done)", skipped)
	}
	fmt.Fprintln(p.w, msg)
}

func (p *lineProgress) update(s snapshot) {
	if s.done >= s.total {
		return // end prints the last line
	}
	if s.done-p.lastDone < p.every && time.Since(p.lastTime) < p.interval {
		return
	}
	p.lastDone, p.lastTime = s.done, time.Now()
	fmt.Fprintf(p.w, "runner: %d/%d done, %d failed, %.2f cases/s, eta %s, %s tokens, $%.4f\n",
		s.done, s.total, s.failed, s.rate(), s.eta().Round(time.Second), formatCount(s.tokens), s.cost)
}

func (p *lineProgress) end(s snapshot, stopped bool) {
	verb := "finished"
	if stopped {
		verb = "stopped at"
	}
	fmt.Fprintf(p.w, "runner: %s %d/%d, %d failed, in %s, %s tokens, $%.4f\n",
		verb, s.done, s.total, s.failed, s.elapsed.Round(time.Millisecond), formatCount(s.tokens), s.cost)
}

// barProgress draws an mpb bar.
type barProgress struct {
	w      io.Writer
	p      *mpb.Progress
	bar    *mpb.Bar
	failed atomic.Int64
	tokens atomic.Int64
	cost   atomic.Uint64 // micro-dollars, so the decorator can read it safely
}

func (p *barProgress) begin(total, skipped int) {
	p.p = mpb.New(mpb.WithOutput(p.w), mpb.WithAutoRefresh(), mpb.WithWidth(100))
	name := "cases"
	if skipped > 0 {
		name = fmt.Sprintf("cases (+%d done)", skipped)
	}
	p.bar = p.p.AddBar(int64(total),
		mpb.PrependDecorators(
			decor.Name(name, decor.WCSyncSpaceR),
			decor.CountersNoUnit("%d/%d", decor.WCSyncWidth),
		),
		mpb.AppendDecorators(
			decor.Any(func(decor.Statistics) string {
				return fmt.Sprintf("%d failed", p.failed.Load())
			}, decor.WCSyncSpace),
			decor.AverageSpeed(0, "%.2f/s", decor.WCSyncSpace),
			decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace), "done"),
			decor.Any(func(decor.Statistics) string {
				return fmt.Sprintf("%s tok $%.4f", formatCount(p.tokens.Load()), float64(p.cost.Load())/1e6)
			}, decor.WCSyncSpace),
		),
	)
	if total == 0 {
		p.bar.SetTotal(0, true)
	}
}

func (p *barProgress) update(s snapshot) {
	p.failed.Store(int64(s.failed))
	p.tokens.Store(s.tokens)
	p.cost.Store(uint64(s.cost*1e6 + 0.5))
	p.bar.SetCurrent(int64(s.done))
}

func (p *barProgress) end(s snapshot, stopped bool) {
	p.update(s)
	if stopped || s.done < s.total {
		p.bar.Abort(false)
	}
	p.p.Wait()
}

// formatCount prints n compactly: 950, 12.3k, 4.56M.
func formatCount(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.2fM", float64(n)/1e6)
}
