// Command testsum runs go test with its arguments (go test -json ARGS) and
// prints what go test prints, one ok/FAIL line per package and the output of
// each failed test, then every skipped test with the reason it gave, so that
// a test that did not run is seen, and last the counts of tests and
// subtests, "N passed, N failed, N skipped". Its exit status is go test's.
//
//	go run ./scripts/testsum ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// event is a line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	sum := summarize(out, os.Stdout)
	err = cmd.Wait()
	printSkips(os.Stdout, sum.skips)
	fmt.Fprintln(os.Stdout, sum.counts())
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
}

// summary is what a go test run did: the skipped tests with their
// reasons ("pkg TestX: reason") and the tests (subtests included) that
// passed, failed and were skipped.
type summary struct {
	skips                   []string
	passed, failed, skipped int
}

// counts is the line CI reads.
func (s summary) counts() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.passed, s.failed, s.skipped)
}

// summarize copies go test's package lines and failed tests' output to w
// and counts the tests.
func summarize(r io.Reader, w io.Writer) summary {
	outputs := map[string][]string{} // package/test -> its output lines
	var sum summary
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(w, sc.Text()) // not JSON: a build error, say
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "run":
			outputs[key] = nil // a test that started: it must end
		case "output":
			if e.Test == "" {
				// Package-level output: keep the ok/FAIL/no test files lines
				// and build failures, as go test prints them.
				if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "--- ") &&
					e.Output != "PASS\n" && e.Output != "FAIL\n" {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			outputs[key] = append(outputs[key], e.Output)
		case "fail":
			if e.Test != "" {
				fmt.Fprint(w, strings.Join(outputs[key], ""))
				sum.failed++
			} else {
				sum.failed += unfinished(w, outputs, e.Package)
			}
			delete(outputs, key)
		case "skip":
			if e.Test != "" {
				sum.skips = append(sum.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(outputs[key])))
				sum.skipped++
			}
			delete(outputs, key)
		case "pass":
			if e.Test != "" {
				sum.passed++
			}
			delete(outputs, key)
		}
	}
	return sum
}

// unfinished prints, for a package that failed, the tests of it that never
// ended (the test binary timed out or crashed while they ran: go test's
// panic is in their output) and returns how many there were.
func unfinished(w io.Writer, outputs map[string][]string, pkg string) int {
	var keys []string
	for k := range outputs {
		if p, test, _ := strings.Cut(k, "\x00"); p == pkg && test != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		_, test, _ := strings.Cut(k, "\x00")
		lines := outputs[k]
		fmt.Fprintf(w, "--- FAIL: %s (did not finish)\n%s", test, strings.Join(lines[max(0, len(lines)-30):], ""))
		delete(outputs, k)
	}
	return len(keys)
}

// reason is what t.Skip said: the output lines after "--- SKIP", trimmed.
func reason(lines []string) string {
	var rs []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		rs = append(rs, l)
	}
	if len(rs) == 0 {
		return "(no reason given)"
	}
	return strings.Join(rs, " ")
}

func printSkips(w io.Writer, skips []string) {
	if len(skips) == 0 {
		return
	}
	sort.Strings(skips)
	fmt.Fprintf(w, "\n%d tests skipped:\n", len(skips))
	for _, s := range skips {
		fmt.Fprintln(w, "  "+s)
	}
}
