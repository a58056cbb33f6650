package codesearch

import (
	"fmt"
	"testing"
	"time"
)

// TestBusyClock: overlapping activities count their wall time once, so
// that a run's index build time is never larger than its wall time (two
// workers building at once were counted twice).
func TestBusyClock(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, c := range []struct {
		name string
		// starts and stops: the seconds at which activities start and
		// stop, in the order of the events.
		events []string
		want   time.Duration
	}{
		{"one", []string{"start 0", "stop 10"}, 10 * time.Second},
		{"overlapping", []string{"start 0", "start 5", "stop 10", "stop 15"}, 15 * time.Second},
		{"nested", []string{"start 0", "start 2", "stop 4", "stop 10"}, 10 * time.Second},
		{"apart", []string{"start 0", "stop 3", "start 10", "stop 14"}, 7 * time.Second},
		{"overlapping, then apart", []string{"start 0", "start 1", "stop 2", "stop 3", "start 5", "stop 6"}, 4 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b busyClock
			for _, e := range c.events {
				var what string
				var s int
				if _, err := fmt.Sscanf(e, "%s %d", &what, &s); err != nil {
					t.Fatal(err)
				}
				if what == "start" {
					b.start(at(s))
				} else {
					b.stop(at(s))
				}
			}
			if b.total != c.want || b.active != 0 {
				t.Errorf("total %v, %d active; want %v, 0 active", b.total, b.active, c.want)
			}
		})
	}
}
