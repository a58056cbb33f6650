package sandbox

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkBwrapStartup measures the cost of starting a command in the
// confined bubblewrap sandbox ("confined": the system directories only)
// against the earlier one that showed the host's whole root read-only
// ("rootfs": --ro-bind / /), for a command that does nothing and for
// python3 -c pass. Besides ns/op (the mean), it reports the median run in
// milliseconds. scripts/sandbox-bench.sh runs it 50 times each.
func BenchmarkBwrapStartup(b *testing.B) {
	confined := requireBwrap(b)
	rootfs := &Bwrap{path: confined.path, system: []string{"--ro-bind", "/", "/"}}
	dir := b.TempDir()
	for _, m := range []struct {
		name string
		r    *Bwrap
	}{{"confined", confined}, {"rootfs", rootfs}} {
		for _, c := range []struct {
			name string
			args []string
		}{{"true", []string{"true"}}, {"python3", []string{"/usr/bin/python3", "-c", "pass"}}} {
			b.Run(m.name+"/"+c.name, func(b *testing.B) {
				times := make([]time.Duration, 0, b.N)
				for range b.N {
					start := time.Now()
					res, err := m.r.Run(b.Context(), Command{Dir: dir, Args: c.args})
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("%v: exit %d, %v: %s", c.args, res.ExitCode, err, res.Stderr)
					}
					times = append(times, time.Since(start))
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2])/float64(time.Millisecond), "median-ms")
			})
		}
	}
}
