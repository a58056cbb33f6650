package html_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/patchbench/patchbench/bench/diffxyz"
	"github.com/patchbench/patchbench/report/html"
)

// TestPageScale is the measurement scripts/html-bench.sh runs: a page of
// generated Diff-XYZ cases (PATCHBENCH_HTML_BENCH of them), or of a real
// run's results file (PATCHBENCH_HTML_RESULTS), its size and the time
// until it is interactive (the case table usable) and ready (charts drawn)
// in headless Chromium. It prints figures and asserts no time.
func TestPageScale(t *testing.T) {
	var n int
	results := os.Getenv("PATCHBENCH_HTML_RESULTS")
	if _, err := fmt.Sscan(os.Getenv("PATCHBENCH_HTML_BENCH"), &n); (err != nil || n <= 0) && results == "" {
		t.Skip("set PATCHBENCH_HTML_BENCH=N to measure a page of N cases, or PATCHBENCH_HTML_RESULTS=FILE for a run's")
	}
	run := html.Run{Name: "bench"}
	if results != "" {
		var err error
		if run, err = html.Load("bench", results); err != nil {
			t.Fatal(err)
		}
		run.Kind = diffxyz.Page()
	} else {
		rows := diffxyzRows((n+7)/8, 0)[:n]
		for i, r := range rows {
			r["key"] = fmt.Sprintf("%d|%s", i, r["key"])
			r["id"] = fmt.Sprintf("repo-%d/file-%d.go", i%977, i)
		}
		run.Rows = rows
	}
	path := filepath.Join(t.TempDir(), "report.html")
	start := time.Now()
	if _, err := html.WriteFile(path, "", []html.Run{run}, kinds()...); err != nil {
		t.Fatal(err)
	}
	written := time.Since(start)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	var interactive, ready time.Duration
	start = time.Now()
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.Poll(`document.body.dataset.interactive === "1"`, nil, chromedp.WithPollingTimeout(120*time.Second), chromedp.WithPollingInterval(10*time.Millisecond)),
	); err != nil {
		t.Fatal(err)
	}
	interactive = time.Since(start)
	if err := chromedp.Run(ctx, chromedp.Poll(`document.body.dataset.ready === "1"`, nil, chromedp.WithPollingTimeout(120*time.Second), chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	ready = time.Since(start)
	var count string
	if err := chromedp.Run(ctx, chromedp.Text("#count", &count, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("cases %s: page %.1f MB, written in %.1f s; interactive after %.2f s, charts drawn after %.2f s; table: %s\n",
		cmp.Or(results, fmt.Sprint(n)), float64(info.Size())/1e6, written.Seconds(), interactive.Seconds(), ready.Seconds(), count)
}
