package html_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/patchbench/patchbench/report/html"
)

// browser starts headless Chromium for one test, with a fresh profile and
// nothing that talks to Google's servers, or skips the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium); skipping the browser test")
	}
	// The profile is not a t.TempDir: Chromium's helper processes can still
	// be writing to it after the browser has exited, which made TempDir's
	// cleanup fail the test ("directory not empty"). Remove it with retries
	// once the browser is gone.
	profile, err := os.MkdirTemp("", "patchbench-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
		removeProfile(t, profile)
	})
	return ctx
}

// removeProfile removes a browser profile directory, retrying while
// Chromium's last helper processes finish writing into it.
func removeProfile(t *testing.T, dir string) {
	var err error
	for i := 0; i < 50; i++ {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("leaving browser profile %s: %v", dir, err)
}

// watcher records console errors, exceptions and every request a page
// makes.
type watcher struct {
	mu       sync.Mutex
	errors   []string
	requests []string
}

func (w *watcher) listen(ctx context.Context) {
	chromedp.ListenTarget(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				w.errors = append(w.errors, "console.error: "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			w.errors = append(w.errors, "exception: "+ev.ExceptionDetails.Error())
		case *network.EventRequestWillBeSent:
			w.requests = append(w.requests, ev.Request.URL)
		}
	})
}

// open writes the page of runs, loads it, and waits until its charts are
// drawn.
func open(t *testing.T, runs []html.Run) (context.Context, *watcher, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if _, err := html.WriteFile(path, "", runs, kinds()...); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	w := &watcher{}
	w.listen(ctx)
	url := "file://" + path
	if err := chromedp.Run(ctx,
		network.Enable(),
		chromedp.Navigate(url),
		chromedp.Poll(`document.body.dataset.ready === "1" || document.body.dataset.error`, nil, chromedp.WithPollingTimeout(60*time.Second)),
	); err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	return ctx, w, url
}

// screenshot saves the whole page under the test's temp dir.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	fmt.Printf("screenshot: %s\n", path)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	var v T
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &v)); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func TestBrowserPageLoads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		runs   []html.Run
		charts int
	}{
		{"diffxyz", []html.Run{{Name: "a", Rows: diffxyzRows(40, 0)}}, 4},
		{"diffxyz-two-runs", []html.Run{{Name: "a", Rows: diffxyzRows(40, 0)}, {Name: "b", Rows: diffxyzRows(40, 1)}}, 5},
		{"swe", []html.Run{{Name: "s", Rows: sweRows()}}, 3},
		{"loc", []html.Run{{Name: "l", Rows: locRows()}}, 3},
		{"loc-two-runs", []html.Run{{Name: "l", Rows: locRows()}, {Name: "m", Rows: locRows()[:7]}}, 4},
		{"ape", []html.Run{{Name: "p", Rows: apeRows()}}, 2},
		{"ape-two-runs", []html.Run{{Name: "p", Rows: apeRows()}, {Name: "q", Rows: apeRows()[:8]}}, 3},
		{"generic", []html.Run{{Name: "g", Rows: []map[string]any{{"id": "x", "score": 0.5, "ok": true}, {"id": "y", "score": 1.0, "ok": false}}}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, w, url := open(t, tc.runs)
			if e := eval[string](t, ctx, `document.body.dataset.error || ""`); e != "" {
				t.Fatalf("page error: %s", e)
			}
			marks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".chart")).map(c => c.dataset.marks || ("error " + c.dataset.error))`)
			if len(marks) != tc.charts {
				t.Errorf("%d charts, want %d", len(marks), tc.charts)
			}
			for i, m := range marks {
				if m == "" || m == "0" || strings.HasPrefix(m, "error") {
					t.Errorf("chart %d drew no mark: %q", i, m)
				}
			}
			notCut(t, ctx)
			screenshot(t, ctx, tc.name)
			w.mu.Lock()
			defer w.mu.Unlock()
			if len(w.errors) > 0 {
				t.Errorf("console errors: %q", w.errors)
			}
			for _, r := range w.requests {
				if r != url {
					t.Errorf("request beyond the page: %s", r)
				}
			}
			if len(w.requests) == 0 {
				t.Errorf("no request seen at all; the network watch does not work")
			}
		})
	}
}

// notCut checks that no header of the case table is cut off, sorted or
// not, nor a value of up to 40 characters ("em_toleran" and "search-r…"
// were).
func notCut(t *testing.T, ctx context.Context) {
	t.Helper()
	cut := eval[[]string](t, ctx, `(() => { const cut = [];
		for (const h of document.querySelectorAll("#thead div")) { h.className = "desc"; if (h.scrollWidth > h.clientWidth) cut.push("header " + h.textContent); h.className = ""; }
		for (const d of document.querySelectorAll("#tbody .tr div")) if (d.scrollWidth > d.clientWidth && d.textContent.length <= 40) cut.push(d.textContent);
		return cut })()`)
	if len(cut) > 0 {
		t.Errorf("cut off: %q", cut)
	}
}

// TestBrowserColumnsNotCut: a Diff-XYZ page with every column of the case
// table shows every header and value whole; the table scrolls sideways
// when the columns need more room than the window has.
func TestBrowserColumnsNotCut(t *testing.T) {
	rows := diffxyzRows(10, 0)
	for i, r := range rows {
		r["change_kind"] = []string{"modify", "add-only", "delete-only"}[i%3]
		r["em_tolerant"], r["applied_tolerant"], r["parsed"] = r["em"], true, true
		r["id"] = fmt.Sprintf("django__django-%05d:%s", 11000+i, r["task"])
	}
	ctx, w, _ := open(t, []html.Run{{Name: "a-run-with-a-long-name", Rows: rows}, {Name: "b", Rows: rows[:5]}})
	notCut(t, ctx)
	if cols := eval[int](t, ctx, `document.querySelectorAll("#thead div").length`); cols != 15 {
		t.Errorf("%d columns, want 15 (run and every Diff-XYZ column)", cols)
	}
	if len(w.errors) > 0 {
		t.Errorf("console errors: %q", w.errors)
	}
}

func TestBrowserCaseBrowser(t *testing.T) {
	rows := diffxyzRows(40, 0)
	// Long responses, shared by the cases of case-7, go into their chunk's
	// string table once; the page puts them back, and finds the edit in
	// them after non-ASCII text.
	preamble := strings.Repeat("Voilà 😀 the change. ", 40)
	for _, r := range rows {
		if strings.HasPrefix(r["id"].(string), "case-7:") {
			r["response"] = preamble + r["response"].(string)
		}
	}
	ctx, w, _ := open(t, []html.Run{{Name: "a", Rows: rows}})
	count := func() string { return eval[string](t, ctx, `document.getElementById("count").textContent`) }
	if got, want := count(), fmt.Sprintf("%d of %d cases", len(rows), len(rows)); got != want {
		t.Fatalf("count %q, want %q", got, want)
	}
	diffgen := 0
	for _, r := range rows {
		if r["task"] == "diffgen" && r["format"] == "udiff" {
			diffgen++
		}
	}
	eval[bool](t, ctx, `(() => { for (const [id, v] of [["filter-task", "diffgen"], ["filter-format", "udiff"]]) {
		const s = document.getElementById(id); s.value = v; s.dispatchEvent(new Event("change")); } return true })()`)
	if got, want := count(), fmt.Sprintf("%d of %d cases", diffgen, len(rows)); got != want {
		t.Fatalf("after filtering task and format: %q, want %q", got, want)
	}
	// The text search narrows to one case.
	if err := chromedp.Run(ctx, chromedp.SendKeys("#search", "case-7:"), chromedp.Poll(`document.getElementById("count").textContent.startsWith("1 of")`, nil, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("search: %v (count %q)", err, count())
	}
	// Sorting by em descending then opening the row.
	if err := chromedp.Run(ctx,
		clickFirstRow(),
		chromedp.WaitVisible(`#case table.diff tr.add`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("opening the case: %v", err)
	}
	title := eval[string](t, ctx, `document.querySelector("#case h2").textContent`)
	if !strings.Contains(title, "case-7:") {
		t.Errorf("opened case %q, want case-7", title)
	}
	if resp := eval[string](t, ctx, `[...document.querySelectorAll("#case pre")].map(p => p.textContent).join("\n")`); !strings.HasPrefix(resp, preamble) {
		t.Errorf("the response shown does not start with its long preamble: %.80q", resp)
	}
	colours := eval[[]string](t, ctx, `["add", "del"].map(c => getComputedStyle(document.querySelector("#case table.diff tr." + c)).backgroundColor)`)
	if colours[0] != "rgb(230, 255, 236)" || colours[1] != "rgb(255, 235, 233)" {
		t.Errorf("added and removed lines coloured %q, want green and red", colours)
	}
	// Line numbers of the added line come from the hunk header (+10).
	ln := eval[string](t, ctx, `document.querySelector("#case table.diff tr.add td:nth-child(2)").textContent`)
	if ln != "11" {
		t.Errorf("added line numbered %q, want 11", ln)
	}
	// Sorting by id, descending, puts the last id first.
	eval[bool](t, ctx, `(() => { const s = document.getElementById("search"); s.value = ""; s.dispatchEvent(new Event("input")); return true })()`)
	if err := chromedp.Run(ctx,
		chromedp.Poll(`!document.getElementById("count").textContent.startsWith("1 of")`, nil, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.Click(`#thead div[data-col="id"]`, chromedp.ByQuery), chromedp.Click(`#thead div[data-col="id"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	first := eval[string](t, ctx, `document.querySelector('#tbody .tr[style*="top: 0px"] div').textContent`)
	if first != "case-9:diffgen" {
		t.Errorf("first row after sorting by id descending: %q, want case-9:diffgen", first)
	}
	screenshot(t, ctx, "case-browser")
	if len(w.errors) > 0 {
		t.Errorf("console errors: %q", w.errors)
	}
}

const xssProbe = "<script>window.__xss = 1</script> and </script><img src=x onerror=\"window.__xss = 2\">\n```diff\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-<b>old</b>\n+</script><img src=x onerror=\"window.__xss = 3\">\n```\n"

func TestBrowserXSS(t *testing.T) {
	rows := diffxyzRows(4, 0)
	rows = append(rows, map[string]any{"key": "probe", "id": "probe</script><img src=x onerror=\"window.__xss=4\">", "task": "diffgen", "format": "udiff<img src=x onerror=\"window.__xss=5\">",
		"prompt": "p", "lang": "go", "size_class": "small", "response": xssProbe, "em": 0.0, "applied": false, "failed": false})
	ctx, w, _ := open(t, []html.Run{{Name: "x<script>window.__xss=6</script>", Rows: rows}})
	if err := chromedp.Run(ctx,
		chromedp.SendKeys("#search", "probe"),
		chromedp.Poll(`document.getElementById("count").textContent.startsWith("1 of")`, nil, chromedp.WithPollingTimeout(5*time.Second)),
		clickFirstRow(),
		chromedp.WaitVisible(`#case pre`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if x := eval[any](t, ctx, `window.__xss === undefined ? null : window.__xss`); x != nil {
		t.Errorf("the probe ran: window.__xss = %v", x)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("img").length`); n != 0 {
		t.Errorf("%d img elements in the page, want 0", n)
	}
	shown := eval[string](t, ctx, `document.querySelector("#case pre").textContent`)
	if !strings.Contains(shown, "<script>window.__xss = 1</script>") {
		t.Errorf("the response is not shown as text: %q", shown)
	}
	added := eval[string](t, ctx, `document.querySelector("#case table.diff tr.add td.tx").textContent`)
	if !strings.Contains(added, "<img src=x onerror") {
		t.Errorf("the edit's added line is not shown as text: %q", added)
	}
	screenshot(t, ctx, "xss")
	if len(w.errors) > 0 {
		t.Errorf("console errors: %q", w.errors)
	}
}

// clickFirstRow clicks the first row of the case table from the page
// itself: the table redraws its rows as the search settles, and a click by
// node id can name a row already replaced ("could not find node with given
// id" on a loaded machine).
func clickFirstRow() chromedp.Action {
	return chromedp.Evaluate(`document.querySelector("#tbody .tr").click()`, nil)
}
