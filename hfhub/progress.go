package hfhub

import (
	"fmt"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// meter shows one download's progress.
type meter struct {
	add func(int)
	end func(error)
}

// progress starts the display of a download of size bytes, have of them
// already in the cache: an mpb bar on a terminal, else a line at the start
// and one at the end.
func (c *Client) progress(what string, size, have int64) meter {
	if c.Progress == nil {
		return meter{add: func(int) {}, end: func(error) {}}
	}
	if !c.Terminal {
		from := ""
		if have > 0 {
			from = fmt.Sprintf(", resuming at %d", have)
		}
		fmt.Fprintf(c.Progress, "downloading %s (%d bytes%s)\n", what, size, from)
		return meter{add: func(int) {}, end: func(err error) {
			if err == nil {
				fmt.Fprintf(c.Progress, "downloaded %s\n", what)
			}
		}}
	}
	p := mpb.New(mpb.WithOutput(c.Progress), mpb.WithWidth(60))
	bar := p.AddBar(size,
		mpb.PrependDecorators(decor.Name(what+" "), decor.CountersKibiByte("% .1f / % .1f")),
		mpb.AppendDecorators(decor.Percentage()))
	bar.SetCurrent(have)
	return meter{
		add: func(n int) { bar.IncrBy(n) },
		end: func(err error) {
			if err != nil || bar.Current() != size {
				bar.Abort(false)
			} else {
				bar.SetTotal(size, true)
			}
			p.Wait()
		},
	}
}
