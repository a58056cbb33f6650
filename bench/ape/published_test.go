package ape

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/llmtest"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/sandbox"
)

// sampler is a fake provider that samples: every candidate it writes is a
// new edit (the gold file and a comment with the draw's number), every
// judge answer APE-Bench's JSON with one Good.
func sampler(t *testing.T, tasks []Task) *llmtest.Server {
	var mu sync.Mutex
	draws := 0
	srv := llmtest.NewServer(llmtest.Config{Reply: func(_, _ string, msgs []llm.Message) string {
		p := msgs[len(msgs)-1].Content
		if strings.HasPrefix(p, "# Code evaluation request") {
			return "Fine.\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"Good\"}, \"FinalOverallGrade\": \"Good\"}\n```\n"
		}
		mu.Lock()
		draws++
		d := draws
		mu.Unlock()
		for i := range tasks {
			if strings.Contains(p, "Instruction:\n"+tasks[i].Instruction+"\n") {
				diff, err := canonical(&tasks[i], tasks[i].ContentAfter+fmt.Sprintf("\n// draw %d\n", d), patch.UDiff)
				if err != nil {
					return err.Error()
				}
				return "```diff\n" + diff + "```\n"
			}
		}
		return "no task"
	}})
	t.Cleanup(srv.Close)
	return srv
}

// TestSamplesWithCache runs candidates and judge against a sampling fake
// provider with the response cache on, as a run has it by default: n
// requests and n different candidates per task, judge_n requests per
// compiled candidate, and nothing asked when the run is made again from
// the cache (into another directory), which gives the same candidates.
// The temperatures on the wire are --temperature's (1 when not given) and
// the judge's 0 (or --judge-temperature).
func TestSamplesWithCache(t *testing.T) {
	ctx := context.Background()
	repoDir, tasks := historyTasks(t)
	tasks = tasks[:2]
	srv := sampler(t, tasks)
	caches := t.TempDir()
	const n, judgeN = 3, 2
	run := func(s Sampling, judgeTemp *float64) (*Report, []map[string]any) {
		t.Helper()
		out := t.TempDir()
		mo := runner.ModelOptions{Model: "openai/gpt-test", Cache: filepath.Join(caches, "cache.db"),
			LLM: llm.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"}}
		jo := mo
		jo.Model, jo.Cache = "openai/judge-test", filepath.Join(caches, "judge-cache.db")
		_, rep, err := Run(ctx, tasks, RunOptions{
			Runner: runner.Options{Out: filepath.Join(out, ResultsFile), Workers: 2}, N: n, JudgeN: judgeN,
			Check: CheckOptions{Repo: repoDir, Command: "true", Runner: sandbox.Plain{}},
			Model: mo, Judge: jo, Sampling: s, JudgeTemperature: judgeTemp,
		})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := runner.ReadRows(filepath.Join(out, ResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		runner.SortRows(rows)
		return rep, rows
	}
	rep, rows := run(Sampling{}, nil)
	if got, want := srv.Requests(), len(tasks)*n+len(tasks)*n*judgeN; got != want {
		t.Errorf("first run: %d requests, want %d (%d candidates, %d votes each)", got, want, len(tasks)*n, judgeN)
	}
	if rep.Compiled != len(tasks)*n || rep.JudgePass != len(tasks)*n {
		t.Errorf("report %+v: want every candidate compiled and passed", rep)
	}
	responses := map[string]map[string]bool{}
	for _, r := range rows {
		task := r["task"].(string)
		if responses[task] == nil {
			responses[task] = map[string]bool{}
		}
		responses[task][r["response"].(string)] = true
	}
	for task, rs := range responses {
		if len(rs) != n {
			t.Errorf("task %s: %d distinct candidates, want %d", task, len(rs), n)
		}
	}
	for _, c := range srv.Calls() {
		want := 1.0
		if c.Model == "judge-test" {
			want = 0
		}
		if c.Temperature == nil || *c.Temperature != want {
			t.Errorf("%s asked at temperature %v, want %v", c.Model, c.Temperature, want)
		}
	}

	srv.ResetCounts()
	_, again := run(Sampling{}, nil)
	if got := srv.Requests(); got != 0 {
		t.Errorf("rerun from the cache: %d requests, want 0", got)
	}
	for i := range rows {
		if again[i]["response"] != rows[i]["response"] || again[i]["cached"] != true {
			t.Errorf("rerun row %v: response %q cached %v, want %q from the cache", again[i]["key"], again[i]["response"], again[i]["cached"], rows[i]["response"])
		}
	}

	// --temperature 0.7 and --judge-temperature 0.2: other requests.
	srv.ResetCounts()
	temp, jtemp := 0.7, 0.2
	run(Sampling{Temperature: &temp}, &jtemp)
	calls := srv.Calls()
	if len(calls) != len(tasks)*n+len(tasks)*n*judgeN {
		t.Fatalf("%d requests at the new temperatures, want %d", len(calls), len(tasks)*n+len(tasks)*n*judgeN)
	}
	for _, c := range calls {
		want := temp
		if c.Model == "judge-test" {
			want = jtemp
		}
		if c.Temperature == nil || *c.Temperature != want {
			t.Errorf("%s asked at temperature %v, want %v", c.Model, c.Temperature, want)
		}
	}
}

// twoFileCommit makes a Go module whose second commit changes a.go to
// call Helper, which the same commit adds to b.go: a.go's gold file
// compiles in that commit's environment and not in its parent's.
func twoFileCommit(t *testing.T) string {
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.21\n")
	write("a.go", "package m\n\n// A is one.\nfunc A() int { return 1 }\n")
	write("b.go", "package m\n\n// B is two.\nfunc B() int { return 2 }\n")
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "initial")
	write("a.go", "package m\n\n// A is what Helper says.\nfunc A() int { return Helper() }\n")
	write("b.go", "package m\n\n// B is two.\nfunc B() int { return 2 }\n\n// Helper helps.\nfunc Helper() int { return 3 }\n")
	gitT(t, dir, "commit", "-qam", "A calls the new Helper")
	return dir
}

// TestEnvironmentOfCommit: a candidate is checked in the environment of
// the task's commit_hash, as APE-Bench's Eleanstic does, so the gold edit
// of a.go, which needs what the same commit added to b.go, compiles; in
// the parent's environment (--env-commit parent) it does not.
func TestEnvironmentOfCommit(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	ctx := context.Background()
	dir := twoFileCommit(t)
	tasks, _, err := Build(ctx, dir, "HEAD", BuildOptions{})
	if err != nil || len(tasks) != 2 || tasks[0].Path() != "a.go" {
		t.Fatalf("tasks %+v, %v; want a.go and b.go", tasks, err)
	}
	a := &tasks[0]
	for _, tc := range []struct {
		env  string
		pass bool
		want string
	}{
		{"", true, ""},
		{EnvCommitTask, true, ""},
		{EnvCommitParent, false, "undefined: Helper"},
	} {
		c, err := Compile(ctx, a, a.ContentAfter, CheckOptions{Repo: dir, Runner: sandbox.Plain{}, EnvCommit: tc.env})
		if err != nil || c.Pass != tc.pass || !strings.Contains(strings.Join(c.Errors, "\n"), tc.want) {
			t.Errorf("env %q: pass %v errors %q (%v); want pass %v and %q", tc.env, c.Pass, c.Errors, err, tc.pass, tc.want)
		}
	}
	// A run with its defaults: the reference candidates compile.
	_, rep, err := Run(ctx, tasks, RunOptions{
		Runner: runner.Options{Out: filepath.Join(t.TempDir(), ResultsFile)}, N: 1, JudgeN: 1,
		Check: CheckOptions{Repo: dir, Runner: sandbox.Plain{}},
		Model: runner.ModelOptions{Model: "reference"}, Judge: runner.ModelOptions{Model: "reference"},
	})
	if err != nil || rep.Compiled != 2 || rep.Overall["compile_pass@1"] != 1 {
		t.Errorf("run in the commits' environments: %+v, %v; want both gold files compiled", rep, err)
	}
}

// buildStore builds the environments of commits of dir with setup.
func buildStore(t *testing.T, dir, setup string, commits ...string) *envstore.Store {
	t.Helper()
	ctx := context.Background()
	store, err := envstore.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	built, err := store.Build(ctx, r, commits, envstore.BuildOptions{Setup: setup, Runner: sandbox.Plain{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if b.Status != envstore.StatusBuilt {
			t.Fatalf("env build of %s: %s %s", b.Commit, b.Status, b.Reason)
		}
	}
	return store
}

func headCommit(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestTaskPathsConfined: a task whose path is absolute, has "..", lies in
// .git, or runs through a symbolic link (committed, or made by the
// environment's setup) is refused: the tasks file names it and reads the
// others, and a run given it records it as an input error, named in the
// report, left out of pass@k, with nothing written outside the tree; the
// run goes on with the other tasks.
func TestTaskPathsConfined(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "ok.py"), []byte("x = 1\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "committed")); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "one")
	commit := headCommit(t, dir)
	task := func(id, p string) Task {
		return Task{ID: id, CommitHash: commit, FilePathBefore: p, FilePathAfter: p,
			ContentBefore: "x = 1\n", ContentAfter: "x = 2\n", Instruction: "set x to 2"}
	}

	// Read from a tasks file: named, the good task kept.
	rel := strings.Repeat("../", strings.Count(dir, "/")) + strings.TrimPrefix(outside, "/") + "/x.py"
	var lines strings.Builder
	for i, p := range []string{"ok.py", "/" + strings.TrimPrefix(outside, "/") + "/x.py", rel, "../../outside/x.py", ".GIT/config", "a/./../../b.py"} {
		b, _ := jsonLine(task(fmt.Sprint("t", i), p))
		lines.WriteString(b)
	}
	tf := filepath.Join(t.TempDir(), "tasks.jsonl")
	os.WriteFile(tf, []byte(lines.String()), 0o644)
	read, bad, err := ReadTasksLenient(tf)
	if err != nil || len(read) != 1 || read[0].ID != "t0" || len(bad) != 5 {
		t.Fatalf("read %d tasks, %d bad (%v); want t0 and 5 bad", len(read), len(bad), err)
	}
	for i, b := range bad {
		if !strings.Contains(b.Error(), fmt.Sprintf("tasks.jsonl:%d (id \"t%d\"): unsafe path", i+2, i+1)) {
			t.Errorf("bad line %d: %v", i+2, b)
		}
	}

	// Given to a run: input errors, nothing written outside, the good
	// task evaluated.
	store := buildStore(t, dir, "ln -s "+outside+" made", commit)
	tasks := []Task{task("good", "ok.py"), task("dotdot", rel), task("committed", "committed/x.py"), task("made", "made/x.py")}
	_, rep, err := Run(ctx, tasks, RunOptions{
		Runner: runner.Options{Out: filepath.Join(t.TempDir(), ResultsFile)}, N: 1, JudgeN: 1,
		Check: CheckOptions{Repo: dir, Store: store, Command: "true", Runner: sandbox.Plain{}},
		Model: runner.ModelOptions{Model: "reference"}, Judge: runner.ModelOptions{Model: "reference"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside the tree: %v", ents)
	}
	if rep.Compiled != 1 || rep.Overall["tasks"] != 1 || rep.Overall["compile_pass@1"] != 1 || rep.Failed != 0 || len(rep.NotEvaluated) != 3 {
		t.Fatalf("report %+v: want the good task evaluated and 3 input errors", rep)
	}
	for i, want := range []string{"committed sample 0: input-error: ", "dotdot sample 0: input-error: ", "made sample 0: input-error: "} {
		if !strings.HasPrefix(rep.NotEvaluated[i], want) || !strings.Contains(rep.NotEvaluated[i], "unsafe path") {
			t.Errorf("not evaluated %d: %q, want %q... unsafe path", i, rep.NotEvaluated[i], want)
		}
	}
}

func jsonLine(t Task) (string, error) {
	var b strings.Builder
	err := WriteTasksTo(&b, []Task{t})
	return b.String(), err
}

// goProxy writes a file:// module proxy holding example.com/dep v1.0.0
// (package dep, func Two) under dir.
func goProxy(t *testing.T, dir string) {
	t.Helper()
	v := filepath.Join(dir, "example.com", "dep", "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/dep\n\ngo 1.21\n"
	os.WriteFile(filepath.Join(v, "list"), []byte("v1.0.0\n"), 0o644)
	os.WriteFile(filepath.Join(v, "v1.0.0.info"), []byte(`{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`), 0o644)
	os.WriteFile(filepath.Join(v, "v1.0.0.mod"), []byte(mod), 0o644)
	f, err := os.Create(filepath.Join(v, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, body := range map[string]string{"go.mod": mod, "dep.go": "package dep\n\n// Two is two.\nfunc Two() int { return 2 }\n"} {
		w, err := z.Create("example.com/dep@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestGoModulesOffline: a Go module with a dependency checks offline from
// its environment, where the setup downloaded the modules into the tree
// (GOMODCACHE=$PWD/.gomodcache, from a file:// proxy committed with the
// repository) or vendored them; without them (a plain checkout) the check
// fails for want of the module, which is an environment problem: the
// candidate is not evaluated, not failed.
func TestGoModulesOffline(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	ctx := context.Background()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	goProxy(t, filepath.Join(dir, "proxy"))
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/app\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "app.go"), []byte("package app\n\nimport \"example.com/dep\"\n\n// Four is four.\nfunc Four() int { return dep.Two() * 2 }\n"), 0o644)
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOPROXY=file://"+filepath.Join(dir, "proxy"), "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOMODCACHE="+t.TempDir())
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "app")
	commit := headCommit(t, dir)
	before := "package app\n\nimport \"example.com/dep\"\n\n// Four is four.\nfunc Four() int { return dep.Two() * 2 }\n"
	body := "package app\n\nimport \"example.com/dep\"\n\n// Four is four.\nfunc Four() int { return dep.Two() + dep.Two() }\n"
	task := &Task{ID: "app", CommitHash: commit, FilePathBefore: "app.go", FilePathAfter: "app.go", ContentBefore: before, ContentAfter: body}
	const env = `export GOPROXY=file://$PWD/proxy GOSUMDB=off GOFLAGS=-mod=mod GOCACHE=$PWD/.gocache; `
	for name, setup := range map[string]string{
		"module cache": env + `GOMODCACHE=$PWD/.gomodcache go mod download && rm -rf .gocache`,
		"vendor":       env + `GOMODCACHE=$HOME/modcache go mod vendor && rm -rf .gocache`,
	} {
		store := buildStore(t, dir, setup, commit)
		c, err := Compile(ctx, task, body, CheckOptions{Repo: dir, Store: store, Runner: sandbox.Plain{}})
		if err != nil || !c.Pass {
			t.Errorf("%s: pass %v errors %q (%v); want the check to pass offline", name, c.Pass, c.Errors, err)
		}
		// A candidate's import no module provides is its own error.
		bad := strings.Replace(body, `import "example.com/dep"`, "import (\n\t\"example.com/dep\"\n\t_ \"example.com/nope\"\n)", 1)
		c, err = Compile(ctx, task, bad, CheckOptions{Repo: dir, Store: store, Runner: sandbox.Plain{}})
		if err != nil || c.Pass || c.Kind() != "import" {
			t.Errorf("%s: unknown import: pass %v kind %q errors %q (%v); want an import error", name, c.Pass, c.Kind(), c.Errors, err)
		}
	}
	c, err := Compile(ctx, task, body, CheckOptions{Repo: dir, Runner: sandbox.Plain{}})
	if err != nil || c.Pass || c.Kind() != KindEnvironment {
		t.Errorf("plain checkout: pass %v kind %q errors %q (%v); want an environment problem", c.Pass, c.Kind(), c.Errors, err)
	}
	_, rep, err := Run(ctx, []Task{*task}, RunOptions{
		Runner: runner.Options{Out: filepath.Join(t.TempDir(), ResultsFile)}, N: 2, JudgeN: 1,
		Check: CheckOptions{Repo: dir, Runner: sandbox.Plain{}},
		Model: runner.ModelOptions{Model: "reference"}, Judge: runner.ModelOptions{Model: "reference"},
	})
	if err != nil || rep.Failed != 0 || len(rep.NotEvaluated) != 2 || len(rep.CompileErrorKinds) != 0 ||
		!strings.Contains(rep.NotEvaluated[0], "environment-error") || !strings.Contains(rep.NotEvaluated[0], "module lookup disabled") {
		t.Errorf("run without the modules: %+v, %v; want 2 candidates not evaluated for the environment, none failed", rep, err)
	}
}

// brokenSandbox is a sandbox that cannot start a command, as bubblewrap
// without user namespaces.
type brokenSandbox struct{}

func (brokenSandbox) Run(context.Context, sandbox.Command) (sandbox.Result, error) {
	return sandbox.Result{ExitCode: -1}, errors.New("bwrap: setting up uid map: Permission denied")
}

func (brokenSandbox) Name() string { return "broken" }

// TestSandboxFailure: a sandbox that does not start is an environment
// problem: the candidates are not evaluated, named with the sandbox's
// error, not counted as failed candidates, and pass@k has nothing to
// average.
func TestSandboxFailure(t *testing.T) {
	ctx := context.Background()
	repoDir, tasks := historyTasks(t)
	_, rep, err := Run(ctx, tasks[:1], RunOptions{
		Runner: runner.Options{Out: filepath.Join(t.TempDir(), ResultsFile)}, N: 2, JudgeN: 1,
		Check: CheckOptions{Repo: repoDir, Runner: brokenSandbox{}},
		Model: runner.ModelOptions{Model: "reference"}, Judge: runner.ModelOptions{Model: "reference"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || rep.Compiled != 0 || len(rep.NotEvaluated) != 2 || len(rep.Overall) != 0 ||
		!strings.Contains(rep.NotEvaluated[1], "sample 1: environment-error: ") || !strings.Contains(rep.NotEvaluated[1], "the check did not start") ||
		!strings.Contains(rep.NotEvaluated[1], "uid map") {
		t.Errorf("report %+v: want both candidates not evaluated for the sandbox, none failed, no figures", rep)
	}
	if md := rep.Markdown(); !strings.Contains(md, "| overall | n/a | n/a | n/a | n/a |") {
		t.Errorf("report.md shows figures for no evaluated candidate:\n%s", md)
	}
}
