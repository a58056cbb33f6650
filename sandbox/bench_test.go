package sandbox

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkBwrapStartup measures the cost of starting a command in the
// confined bubblewrap sandbox (the system directories only) against the
// earlier one that showed the host's whole root read-only (--ro-bind / /),
// for a command that does nothing and for python3 -c pass. Each iteration
// runs the command once in each sandbox, alternating which goes first, so
// that a change of load on the machine weighs on both; ns/op is the sum of
// the two means, and the median of each sandbox is reported in
// milliseconds (confined-ms, rootfs-ms). scripts/sandbox-bench.sh runs it
// 50 times each.
func BenchmarkBwrapStartup(b *testing.B) {
	confined := requireBwrap(b)
	rootfs := &Bwrap{path: confined.path, system: []string{"--ro-bind", "/", "/"}}
	dir := b.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{{"true", []string{"true"}}, {"python3", []string{"/usr/bin/python3", "-c", "pass"}}} {
		b.Run(c.name, func(b *testing.B) {
			var times [2][]time.Duration
			runners := [2]*Bwrap{confined, rootfs}
			for i := range b.N {
				for k := range 2 {
					j := (i + k) % 2
					start := time.Now()
					res, err := runners[j].Run(b.Context(), Command{Dir: dir, Args: c.args})
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("%v: exit %d, %v: %s", c.args, res.ExitCode, err, res.Stderr)
					}
					times[j] = append(times[j], time.Since(start))
				}
			}
			for j, unit := range []string{"confined-ms", "rootfs-ms"} {
				slices.Sort(times[j])
				b.ReportMetric(float64(times[j][len(times[j])/2])/float64(time.Millisecond), unit)
			}
		})
	}
}
