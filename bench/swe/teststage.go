package swe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/internal/shtemplate"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/sandbox"
)

// TestConfig says how the test stage runs tests.
type TestConfig struct {
	// Runner runs the test command (see package sandbox).
	Runner sandbox.Runner
	// Command is the test command template for instances whose dataset row
	// has no test_cmd or test_command (see [ExpandTemplate]). It is run
	// with /bin/sh -c in the worktree.
	Command string
	// Image is the container image template, for the Docker runner.
	Image string
	// Timeout bounds each test command; zero means none.
	Timeout time.Duration
	// Env holds extra KEY=value variables for the test command, on top of
	// the sandbox's defaults and PYTHONDONTWRITEBYTECODE=1.
	Env []string
	// Writable lists more directories the command may write to (a shared
	// GOCACHE, for example).
	Writable []string
	// ReadOnly lists more host paths the command may read: a toolchain
	// or module cache outside the sandbox's system directories.
	ReadOnly []string
	// Limits are the command's resource limits.
	Limits sandbox.Limits
	// WorkDir is where worktrees are made; empty means the system's
	// temporary directory.
	WorkDir string
	// Specs are the user's test specs (--spec), tried before Command and
	// the built-in specs.
	Specs SpecTable
	// NoBuiltinSpecs turns the built-in specs off.
	NoBuiltinSpecs bool
	// EnvStore, if set, holds the environments of base commits: the tests
	// run in the restored environment instead of a fresh worktree.
	EnvStore *envstore.Store
}

// ExpandTemplate fills in a test command template for inst, each
// placeholder once and each value one shell word (see package
// internal/shtemplate: a value holding quotes, $(...) or another
// placeholder stays the one word it is):
//
//	{tests}        the FAIL_TO_PASS and PASS_TO_PASS test ids, each one
//	               word, separated by spaces; an id cut short in
//	               the dataset (a parametrization with no closing bracket)
//	               is passed as the test it parametrizes
//	{tests_regex}  one word, a regular expression matching those test
//	               names up to the first '/' exactly, for go test -run:
//	               '^(TestA|TestB)$'
//	{instance_id}, {repo}, {base_commit}, {version}
func ExpandTemplate(tmpl string, inst Instance) string {
	return shtemplate.Expand(tmpl, templateVars(inst))
}

// ExpandImage fills in a container image template for inst with the
// placeholders of [ExpandTemplate], unquoted (the image is one argument of
// the container engine, not read by a shell), and refuses a result that is
// not an image reference: letters, digits and ._:/@- only, not starting
// with '-', at most 255 bytes.
func ExpandImage(tmpl string, inst Instance) (string, error) {
	image := shtemplate.ExpandRaw(tmpl, templateVars(inst))
	if !imageRef(image) {
		return "", fmt.Errorf("image %q (from the template %q) is not an image reference", image, tmpl)
	}
	return image, nil
}

func imageRef(s string) bool {
	if s == "" || len(s) > 255 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:/@-", c) >= 0) {
			return false
		}
	}
	return true
}

func templateVars(inst Instance) shtemplate.Vars {
	tests := append(append([]string{}, inst.FailToPass...), inst.PassToPass...)
	var args, names []string
	seen, seenArg := map[string]bool{}, map[string]bool{}
	for _, t := range tests {
		if a := commandLineID(t); !seenArg[a] {
			seenArg[a] = true
			args = append(args, a)
		}
		n, _, _ := strings.Cut(t, "/")
		if !seen[n] {
			seen[n] = true
			names = append(names, regexp.QuoteMeta(n))
		}
	}
	return shtemplate.Vars{
		"tests":       args,
		"tests_regex": {"^(" + strings.Join(names, "|") + ")$"},
		"instance_id": {inst.InstanceID},
		"repo":        {inst.Repo},
		"base_commit": {inst.BaseCommit},
		"version":     {inst.Version},
	}
}

// commandLineID returns a test id as a test runner's command line can take
// it. SWE-bench's ids are what its log parser read, the second word of a
// result line, so a parametrization holding a space is cut there
// ("test_x[a(1," for test_x[a(1, 2)]); such an id names no test, and
// pytest given it collects nothing. It becomes the id up to its bracket,
// which runs every parametrization; grading still uses the cut id.
func commandLineID(id string) string {
	if i := strings.IndexByte(id, '['); i >= 0 && !strings.HasSuffix(id, "]") {
		return id[:i]
	}
	return id
}

// shellQuote is the one quoting of the module's command templates.
func shellQuote(s string) string { return shtemplate.Quote(s) }

// testCommand returns the command for inst and the parser of its log: the
// row's own test_cmd, else the user's spec for its repository and version,
// else the --test-cmd template, else the built-in spec (see [Spec]). A
// template's log is read by every parser [ParseTestOutput] knows.
func (c *TestConfig) testCommand(inst Instance) (cmdline, parser string, env []string) {
	if inst.TestCmd != "" {
		return ExpandTemplate(inst.TestCmd, inst), "auto", nil
	}
	if s, ok := c.Specs.Lookup(inst.Repo, inst.Version); ok {
		return s.Command(inst), s.Parser, s.Env
	}
	if c.Command != "" {
		return ExpandTemplate(c.Command, inst), "auto", nil
	}
	if !c.NoBuiltinSpecs {
		if s, ok := BuiltinSpecs().Lookup(inst.Repo, inst.Version); ok {
			return s.Command(inst), s.Parser, s.Env
		}
	}
	return "", "", nil
}

// testOutcome is the test stage's verdict.
type testOutcome struct {
	status, reason string
	run            *TestRun
	log            []byte
	// harness, when set, is the official harness's verdict where it
	// differs from status (see harnessStatus).
	harness string
}

// harnessStatus is the outcome under the official harness's grading.
func (o testOutcome) harnessStatus() string {
	if o.harness != "" {
		return o.harness
	}
	return o.status
}

// runTests makes a worktree of r at commit (or restores commit's environment
// from cfg.EnvStore), writes the patched files, resets
// the files the test patch touches to their base content and applies the test
// patch (as SWE-bench does), runs the test command in the sandbox, and grades
// the log.
func runTests(ctx context.Context, r *repo.Repo, commit string, inst Instance, results []patch.FileResult, diff string, cfg *TestConfig) testOutcome {
	if cfg.Image == OfficialImage {
		return runOfficial(ctx, inst, diff, cfg)
	}
	cmdline, parser, specEnv := cfg.testCommand(inst)
	if cmdline == "" {
		return testOutcome{status: StatusTestError, reason: "no test command: the dataset row has no test_cmd, no spec names its repository and version, and no --test-cmd was given"}
	}
	tmp, err := os.MkdirTemp(cfg.WorkDir, "patchbench-swe-"+SafeID(inst.InstanceID)+"-")
	if err != nil {
		return testOutcome{status: StatusInfraError, reason: fmt.Sprintf("make work directory: %v", err)}
	}
	defer os.RemoveAll(tmp)
	tt, err := testTree(ctx, r, commit, filepath.Join(tmp, "tree"), cfg)
	if err != nil {
		return testOutcome{status: StatusInfraError, reason: err.Error()}
	}
	defer tt.cleanup()
	tree := tt.dir

	// This process writes through tt.path (by descriptors); git runs in
	// the tree's namespace when it has one.
	if err := patch.WriteResults(tt.path, results); err != nil {
		return testOutcome{status: StatusInfraError, reason: fmt.Sprintf("write the patched files into the worktree: %v", err)}
	}
	if strings.TrimSpace(inst.TestPatch) != "" {
		if err := resetFiles(ctx, r, commit, tt.path, inst.TestPatch); err != nil {
			return testOutcome{status: StatusTestError, reason: err.Error()}
		}
		if err := repo.ApplyInDir(ctx, tree, inst.TestPatch, tt.enter...); err != nil {
			return testOutcome{status: StatusTestError, reason: "the test patch does not apply: " + err.Error()}
		}
	}
	run := &TestRun{Runner: cfg.Runner.Name(), Command: cmdline, Parser: parser, EnvStore: cfg.EnvStore != nil, EnvMethod: tt.method, EnvMethodReason: tt.reason}
	c := sandbox.Command{
		Namespace:     tt.namespace,
		Dir:           tree,
		Args:          []string{"/bin/sh", "-c", cmdline},
		Env:           append(append([]string{"PYTHONDONTWRITEBYTECODE=1"}, specEnv...), cfg.Env...),
		Timeout:       cfg.Timeout,
		ExtraWritable: cfg.Writable,
		ExtraReadOnly: cfg.ReadOnly,
		Limits:        cfg.Limits,
	}
	if cfg.Image != "" {
		if c.Image, err = ExpandImage(cfg.Image, inst); err != nil {
			return testOutcome{status: StatusTestError, reason: err.Error()}
		}
	}
	res, err := cfg.Runner.Run(ctx, c)
	return gradeRun(inst, cfg, run, parser, res, err, nil)
}

// gradeRun grades a test command's result: a sandbox failure or a timeout,
// else the log read by parser and graded against FAIL_TO_PASS and
// PASS_TO_PASS. text, when not nil, is the part of the log to grade.
func gradeRun(inst Instance, cfg *TestConfig, run *TestRun, parser string, res sandbox.Result, err error, text []byte) testOutcome {
	run.ExitCode, run.TimedOut, run.DurationMS = res.ExitCode, res.TimedOut, res.Duration.Milliseconds()
	log := append(append([]byte{}, res.Stdout...), res.Stderr...)
	out := testOutcome{run: run, log: log}
	switch {
	case err != nil:
		out.status, out.reason = StatusTestError, fmt.Sprintf("%s sandbox: %v", cfg.Runner.Name(), err)
		return out
	case res.TimedOut:
		out.status, out.reason = StatusTestTimeout, fmt.Sprintf("the test command ran past %s", cfg.Timeout)
		return out
	}
	graded := string(res.Stdout) + "\n" + string(res.Stderr)
	if text != nil {
		graded = string(text)
	}
	statuses, _ := ParseLog(parser, graded)
	_, known := ParseTestOutput(graded)
	if !known && len(statuses) == 0 && res.ExitCode != 0 {
		out.status = StatusTestError
		out.reason = fmt.Sprintf("no test results in the output (exit %d): %s", res.ExitCode, lastLine(log))
		// The official harness grades such a log as any other (its
		// get_logs_eval): every test missing, so unresolved unless
		// the instance names no test.
		ts, resolved := Grade(inst, nil)
		run.Status, out.harness = &ts, StatusUnresolved
		if resolved {
			out.harness = StatusResolved
		}
		return out
	}
	ts, resolved := Grade(inst, statuses)
	run.Status = &ts
	run.Tests = testOutcomes(inst, statuses)
	if resolved {
		out.status = StatusResolved
	} else {
		out.status = StatusUnresolved
		var parts []string
		if f := ts.FailToPass.Failure; len(f) > 0 {
			parts = append(parts, "FAIL_TO_PASS failing: "+listSome(f))
		}
		if f := ts.PassToPass.Failure; len(f) > 0 {
			parts = append(parts, "PASS_TO_PASS failing: "+listSome(f))
		}
		out.reason = strings.Join(parts, "; ")
	}
	return out
}

// testEnv is the tree a test stage runs in.
type testEnv struct {
	// dir is the tree where the test command (and git) sees it; path is
	// where this process reaches it by descriptors (see
	// envstore.RestoreResult.Path).
	dir, path string
	// method and reason say how an environment was restored.
	method, reason string
	// namespace and enter: the user namespace the tree is mounted in,
	// for the sandbox and for git (envstore.RestoreResult.Enter).
	namespace int
	enter     []string
	cleanup   func()
}

// testTree makes the tree the tests run in at dir: a worktree of commit, or
// its environment restored from cfg.EnvStore: an overlay where this process
// can mount one (constant time; its cleanup unmounts it, and a killed run's
// is released by the next run); as an ordinary user, an overlay in a user
// namespace that the sandbox enters, where the tree is the user's; else
// files the tests may write in place without reaching the store (reflinks,
// copies, or hard links only where this process cannot write read-only
// files); everything below replaces files anyway (patch.WriteResults,
// resetFiles, git apply).
func testTree(ctx context.Context, r *repo.Repo, commit, dir string, cfg *TestConfig) (testEnv, error) {
	if cfg.EnvStore != nil {
		res, err := cfg.EnvStore.Restore(ctx, commit, dir, envstore.RestoreOptions{Overlay: true, Temporary: true, Namespace: sandbox.EntersNamespaces(cfg.Runner)})
		if err != nil {
			return testEnv{}, fmt.Errorf("env store: %w", err)
		}
		enter, err := res.Enter()
		if err != nil {
			res.Release()
			return testEnv{}, fmt.Errorf("env store: %w", err)
		}
		return testEnv{dir: res.Dir, path: res.Path, method: res.Method, reason: res.MethodReason, namespace: res.NamespacePID, enter: enter,
			cleanup: func() { res.Release() }}, nil
	}
	wt, err := r.AddWorktree(ctx, commit, dir)
	if err != nil {
		return testEnv{}, err
	}
	return testEnv{dir: wt.Dir, path: wt.Dir, cleanup: func() { wt.Remove(context.WithoutCancel(ctx)) }}, nil
}

func listSome(s []string) string {
	if len(s) > 5 {
		return strings.Join(s[:5], ", ") + fmt.Sprintf(" and %d more", len(s)-5)
	}
	return strings.Join(s, ", ")
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// resetFiles gives every file the test patch touches its content at the base
// commit, removing those absent there, so that a prediction's edits to the
// tests do not stop the test patch from applying (SWE-bench checks these
// files out at the base commit).
func resetFiles(ctx context.Context, r *repo.Repo, commit, dir, testPatch string) error {
	p, err := patch.ParseUDiff(testPatch, patch.DefaultParseOptions)
	if err != nil {
		return fmt.Errorf("the test patch does not parse: %w", err)
	}
	paths := map[string]bool{}
	for _, fp := range p.Files {
		for _, q := range []string{fp.OldPath, fp.NewPath} {
			if q != "" && validPath(q) {
				paths[q] = true
			}
		}
	}
	sorted := make([]string, 0, len(paths))
	for q := range paths {
		sorted = append(sorted, q)
	}
	sort.Strings(sorted)
	// Through the same confinement as the prediction's files: a path of the
	// test patch that runs through a link of the tree is not written.
	root, err := patch.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	defer root.Close()
	var results []patch.FileResult
	for _, q := range sorted {
		data, err := r.ReadFile(ctx, commit, q)
		cur, cerr := root.ReadFile(q)
		if errors.Is(cerr, patch.ErrUnsafePath) {
			return fmt.Errorf("reset: %w", cerr)
		}
		if errors.Is(err, fs.ErrNotExist) {
			if cerr == nil {
				results = append(results, patch.FileResult{OldPath: q, Op: patch.Delete})
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("reset %s: %w", q, err)
		}
		if cerr == nil && bytes.Equal(cur, data) {
			continue
		}
		// WriteResults replaces files, never writes into them: a file may
		// be a hard link into an environment store.
		results = append(results, patch.FileResult{Path: q, Op: patch.Modify, Content: data})
	}
	if err := root.WriteResults(results); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	return nil
}
