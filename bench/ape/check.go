package ape

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/internal/shtemplate"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/sandbox"
)

// CheckOptions configure the compile stage.
type CheckOptions struct {
	// Repo is the git repository the tasks come from; it gives the tree of
	// a commit when Store is nil.
	Repo string
	// Store, when set, restores the environment of the task's commit (the
	// built tree, dependencies included) instead of a plain checkout.
	Store *envstore.Store
	// Command is a check command template for files without a built-in
	// check: {file} is the file's path relative to the tree, {dir} its
	// directory, each filled in once as one shell word
	// (internal/shtemplate); it runs with /bin/sh -c at the root of the tree.
	Command string
	// Runner runs the check (sandbox.Detect by default).
	Runner sandbox.Runner
	// Timeout bounds one check; zero means two minutes.
	Timeout time.Duration
	// EnvCommit is the commit whose environment checks a candidate:
	// EnvCommitTask (the default, as APE-Bench's Eleanstic does: the
	// task's commit_hash, with the candidate's file in place of the
	// commit's) or EnvCommitParent (the commit before it).
	EnvCommit string
	// GoCache is the Go build cache the checks share; empty gives each
	// check a fresh one. Run and Verify make one for the run: a cold
	// cache compiles the standard library again for every candidate
	// (a minute each for cobra on a loaded machine). Only the go tool
	// writes it: the Go check runs no code of the candidate (no cgo).
	GoCache string
}

// EnvCommit values.
const (
	EnvCommitTask   = "commit"
	EnvCommitParent = "parent"
)

// envCommit returns the commit whose environment checks t's candidates.
func (o CheckOptions) envCommit(t *Task) (string, error) {
	switch o.EnvCommit {
	case "", EnvCommitTask:
		if t.CommitHash == "" {
			return "", fmt.Errorf("task %s has no commit_hash", t.ID)
		}
		return t.CommitHash, nil
	case EnvCommitParent:
		if t.ParentCommit != "" {
			return t.ParentCommit, nil
		}
		if t.CommitHash == "" {
			return "", fmt.Errorf("task %s has no commit_hash", t.ID)
		}
		return t.CommitHash + "^", nil
	}
	return "", fmt.Errorf("unknown environment commit %q (want %s or %s)", o.EnvCommit, EnvCommitTask, EnvCommitParent)
}

// Check is the outcome of the compile stage for one candidate.
type Check struct {
	Pass     bool     `json:"compile_pass"`
	Command  string   `json:"compile_command,omitempty"`
	Errors   []string `json:"compile_errors,omitempty"`
	Warnings []string `json:"compile_warnings,omitempty"`
	Output   string   `json:"compile_output,omitempty"`
	TimedOut bool     `json:"compile_timed_out,omitempty"`
	// Millis is the time of the check command; SetupMillis that of
	// restoring the tree and writing the file.
	Millis      int64 `json:"compile_ms"`
	SetupMillis int64 `json:"compile_setup_ms"`
	// EnvMethod and EnvMethodReason say how the environment store
	// restored the tree, and why (envstore.RestoreResult): "overlay",
	// "overlay-userns", or files ("reflink", "hardlink", "copy").
	EnvMethod       string `json:"env_method,omitempty"`
	EnvMethodReason string `json:"env_method_reason,omitempty"`
}

// location matches a compiler diagnostic that names a file and line.
var location = regexp.MustCompile(`^\S+:\d+(:\d+)?: `)

// Compile restores the environment of t's commit (see
// CheckOptions.EnvCommit), writes content in place of t's file, and runs
// the check for the file's language. The file is written through a
// patch.Root: a path that is absolute, has "..", or runs through a
// symbolic link of the tree (committed or made by the setup) is refused
// with an error wrapping patch.ErrUnsafePath, and nothing is written. An
// environment that cannot be had or used gives an error wrapping
// ErrEnvironment.
func Compile(ctx context.Context, t *Task, content string, opts CheckOptions) (Check, error) {
	start := time.Now()
	commit, err := opts.envCommit(t)
	if err != nil {
		return Check{}, fmt.Errorf("ape compile %s: %w", t.ID, err)
	}
	script, env, extra, err := checkScript(t.Path(), opts.Command)
	if err != nil {
		return Check{}, fmt.Errorf("ape compile %s: %w: %w", t.ID, ErrEnvironment, err)
	}
	tmp, err := os.MkdirTemp("", "patchbench-ape-")
	if err != nil {
		return Check{}, fmt.Errorf("ape compile %s: %w", t.ID, err)
	}
	defer os.RemoveAll(tmp)
	runner := opts.Runner
	if runner == nil {
		runner = sandbox.Detect(ctx)
	}
	tree := filepath.Join(tmp, "tree")
	ct, err := restore(ctx, commit, tree, opts, sandbox.EntersNamespaces(runner))
	if err != nil {
		return Check{}, fmt.Errorf("ape compile %s: %w: %w", t.ID, ErrEnvironment, err)
	}
	defer ct.release()
	if err := writeCandidate(ct.path, t.Path(), content); err != nil {
		return Check{}, fmt.Errorf("ape compile %s: %w", t.ID, err)
	}
	env = append(env, goEnv(tree, t.Path())...)
	gocache, writable := filepath.Join(tmp, "gocache"), []string{tmp}
	if opts.GoCache != "" {
		gocache, writable = opts.GoCache, append(writable, opts.GoCache)
	}
	env = append(env, "HOME="+tmp, "GOCACHE="+gocache, "TMPDIR="+tmp)
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	setup := time.Since(start)
	res, err := runner.Run(ctx, sandbox.Command{
		Dir: tree, Namespace: ct.namespace, Args: []string{"/bin/sh", "-c", script}, Env: env, Timeout: timeout,
		ExtraWritable: writable, ExtraReadOnly: extra, MaxOutput: 1 << 20,
	})
	if err != nil && res.ExitCode == -1 {
		return Check{}, fmt.Errorf("ape compile %s: the check did not start: %w: %w", t.ID, ErrEnvironment, err)
	}
	c := Check{
		Pass: res.ExitCode == 0 && !res.TimedOut, Command: script, TimedOut: res.TimedOut,
		Millis: res.Duration.Milliseconds(), SetupMillis: setup.Milliseconds(),
		EnvMethod: ct.method, EnvMethodReason: ct.reason,
	}
	out := strings.ReplaceAll(string(res.Stdout)+string(res.Stderr), tree+"/", "")
	c.Output = out
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(l, "vet: "))
		if !location.MatchString(l) {
			continue
		}
		if strings.Contains(strings.ToLower(l), "warning") {
			c.Warnings = append(c.Warnings, l)
		} else {
			c.Errors = append(c.Errors, l)
		}
	}
	if !c.Pass && len(c.Errors) == 0 && strings.TrimSpace(out) != "" {
		c.Errors = []string{strings.TrimSpace(out)}
	}
	return c, nil
}

// writeCandidate writes content as the file name of the tree, through the
// confinement of every patch write (patch.Root: no .git, no link, no
// special file, inside the tree). WriteResults replaces the file rather
// than writing into it: a restored file may be a hard link into the store.
func writeCandidate(tree, name, content string) error {
	return patch.WriteResults(tree, []patch.FileResult{{OldPath: name, Path: name, Op: patch.Modify, Content: []byte(content)}})
}

// checkTree is the tree a check runs in.
type checkTree struct {
	// path is where this process reaches it (by descriptors), namespace
	// the user namespace it is mounted in (see envstore.RestoreResult).
	path      string
	namespace int
	// method and reason: how the store restored it, and why.
	method, reason string
	// release undoes an overlay, to be called before the tree is removed.
	release func()
}

// restore makes the tree of commit at dest: from the store when there is
// one (an overlay where this process can mount one, in constant time; as
// an ordinary user, in a user namespace the sandbox enters, when
// namespaces is set and the tree is the user's), from git archive
// otherwise.
func restore(ctx context.Context, commit, dest string, opts CheckOptions, namespaces bool) (checkTree, error) {
	plain := checkTree{path: dest, release: func() {}}
	if opts.Store != nil {
		if opts.Repo != "" {
			if rp, err := repo.Open(ctx, opts.Repo); err == nil {
				if full, err := rp.ResolveCommit(ctx, commit); err == nil {
					commit = full
				}
				rp.Close()
			}
		}
		res, err := opts.Store.Restore(ctx, commit, dest, envstore.RestoreOptions{Overlay: true, Temporary: true, Namespace: namespaces})
		if err != nil {
			return checkTree{}, err
		}
		return checkTree{path: res.Path, namespace: res.NamespacePID, method: res.Method, reason: res.MethodReason, release: func() { res.Release() }}, nil
	}
	if opts.Repo == "" {
		return checkTree{}, fmt.Errorf("neither an environment store nor a repository to check in")
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return checkTree{}, err
	}
	rp, err := repo.Open(ctx, opts.Repo)
	if err != nil {
		return checkTree{}, err
	}
	defer rp.Close()
	if err := rp.Export(ctx, commit, dest); err != nil {
		return checkTree{}, err
	}
	return plain, nil
}

// undefinedNames is a static check for Python: byte-compile the file, then
// report every name loaded at module or function level that is bound
// nowhere in the module and is not a builtin (what pyflakes calls an
// undefined name, without its scope subtleties).
const undefinedNames = `import ast, builtins, sys
f = sys.argv[1]
src = open(f).read()
tree = ast.parse(src, f)
compile(src, f, "exec")
bound = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__builtins__", "__spec__", "__path__"}
for n in ast.walk(tree):
    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load): bound.add(n.id)
    elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): bound.add(n.name)
    elif isinstance(n, ast.arg): bound.add(n.arg)
    elif isinstance(n, (ast.Import, ast.ImportFrom)):
        for a in n.names: bound.add((a.asname or a.name).split(".")[0])
    elif isinstance(n, ast.ExceptHandler) and n.name: bound.add(n.name)
    elif isinstance(n, (ast.Global, ast.Nonlocal)): bound.update(n.names)
bad = 0
for n in ast.walk(tree):
    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound:
        print("%s:%d:%d: undefined name %r" % (f, n.lineno, n.col_offset + 1, n.id)); bad = 1
sys.exit(bad)
`

// checkScript returns the check of file (relative to the tree), its extra
// environment and the directories outside the system ones it reads.
func checkScript(file, template string) (script string, env, readOnly []string, err error) {
	q := shellQuote
	if template != "" {
		return shtemplate.Expand(template, shtemplate.Vars{"file": {file}, "dir": {path.Dir(file)}}), nil, nil, nil
	}
	switch path.Ext(file) {
	case ".go":
		goBin, err := exec.LookPath("go")
		if err != nil {
			return "", nil, nil, fmt.Errorf("no go toolchain for %s: %w", file, err)
		}
		goBin, _ = filepath.EvalSymlinks(goBin)
		root := filepath.Dir(filepath.Dir(goBin))
		pkg := q("./" + path.Dir(file))
		// Offline: the environment holds the modules the build needs (see
		// goEnv), or the check fails naming the missing module.
		env := []string{"GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0", "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin"}
		return "go build -o /dev/null " + pkg + " && go vet " + pkg, env, []string{root}, nil
	case ".py":
		// The system interpreter by path: the sandbox hides per-user
		// installs (pyenv shims under /root) that PATH may name first.
		return "/usr/bin/python3 -c " + q(undefinedNames) + " " + q(file), nil, nil, nil
	case ".java":
		// javac on the file against the tree's sources: the source root is
		// the file's directory less its package's path. Libraries must be
		// in the environment, named by CLASSPATH.
		javac, err := exec.LookPath("javac")
		if err != nil {
			return "", nil, nil, fmt.Errorf("no java toolchain for %s: %w", file, err)
		}
		javac, _ = filepath.EvalSymlinks(javac) // not through /etc/alternatives
		jdk := filepath.Dir(filepath.Dir(javac))
		script := "f=" + q(file) + `; pkg=$(sed -n 's/^[[:space:]]*package[[:space:]][[:space:]]*\([A-Za-z0-9_.]*\)[[:space:]]*;.*/\1/p' "$f" | head -n 1 | tr . /)` +
			`; d=$(dirname "$f"); root=${d%"$pkg"}; out=$(mktemp -d) && ` + q(javac) +
			` -d "$out" -proc:none -implicit:none -Xlint:none -sourcepath "${root:-.}" "$f"`
		return script, nil, []string{jdk}, nil
	case ".rs":
		// cargo check of the crate that holds the file, offline, with the
		// toolchain's own cargo (not rustup's proxy, which the sandbox
		// would not find) and a fresh CARGO_HOME: dependencies must be in
		// the environment (vendored).
		rustc, err := exec.LookPath("rustc")
		if err != nil {
			return "", nil, nil, fmt.Errorf("no rust toolchain for %s: %w", file, err)
		}
		out, err := exec.Command(rustc, "--print", "sysroot").Output()
		if err != nil {
			return "", nil, nil, fmt.Errorf("rust toolchain for %s: %w", file, err)
		}
		sysroot := strings.TrimSpace(string(out))
		env := []string{"PATH=" + filepath.Join(sysroot, "bin") + ":/usr/bin:/bin", "CARGO_HOME=/tmp/cargo-home",
			"CARGO_TARGET_DIR=/tmp/cargo-target", "CARGO_TERM_COLOR=never"}
		script := "d=$(dirname " + q(file) + `); while [ "$d" != . ] && [ "$d" != / ] && [ ! -f "$d/Cargo.toml" ]; do d=$(dirname "$d"); done` +
			`; cd "$d" && cargo check --offline --quiet --message-format short`
		return script, env, []string{sysroot}, nil
	case ".lean":
		// As APE-Bench does: the file checked in the project's Lake
		// environment (restored with its build outputs by the store).
		lake, err := exec.LookPath("lake")
		if err != nil {
			return "", nil, nil, fmt.Errorf("no lean toolchain (lake) for %s: %w", file, err)
		}
		lake, _ = filepath.EvalSymlinks(lake)
		toolchain := filepath.Dir(filepath.Dir(lake))
		return q(lake) + " env lean " + q(file), []string{"PATH=" + filepath.Dir(lake) + ":/usr/bin:/bin"}, []string{toolchain}, nil
	}
	return "", nil, nil, fmt.Errorf("no built-in check for %s: give --check-cmd", file)
}

// GoModCache is where an environment's setup puts the Go modules the
// check needs, relative to the tree (for example with
// "GOMODCACHE=$PWD/.gomodcache go mod download").
const GoModCache = ".gomodcache"

// goEnv returns the module settings of the Go check of file in tree, so
// that it builds offline from what the environment holds: the vendor
// directory of file's module when it has one (GOFLAGS=-mod=vendor, from a
// setup "go mod vendor" or a committed one), else the module cache the
// setup left at GoModCache (GOMODCACHE there, -mod=readonly: an import no
// required module provides is the candidate's error). Without either, a
// module with dependencies fails with "module lookup disabled", which
// ErrorKind names an environment problem.
func goEnv(tree, file string) []string {
	if path.Ext(file) != ".go" {
		return nil
	}
	mod := ""
	for d := path.Dir(file); ; d = path.Dir(d) {
		if st, err := os.Lstat(filepath.Join(tree, filepath.FromSlash(d), "go.mod")); err == nil && st.Mode().IsRegular() {
			mod = d
			break
		}
		if d == "." || d == "/" {
			break
		}
	}
	if mod != "" {
		if st, err := os.Lstat(filepath.Join(tree, filepath.FromSlash(mod), "vendor", "modules.txt")); err == nil && st.Mode().IsRegular() {
			return []string{"GOFLAGS=-mod=vendor"}
		}
	}
	cache := filepath.Join(tree, GoModCache)
	if st, err := os.Lstat(cache); err == nil && st.IsDir() {
		return []string{"GOFLAGS=-mod=readonly", "GOMODCACHE=" + cache}
	}
	return []string{"GOFLAGS=-mod=readonly", "GOMODCACHE=" + filepath.Join(filepath.Dir(tree), "gomodcache")}
}

// withGoCache returns o with a Go build cache for one run (see
// CheckOptions.GoCache) unless it has one, and the function that removes it.
func withGoCache(o CheckOptions) (CheckOptions, func(), error) {
	if o.GoCache != "" {
		return o, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "patchbench-ape-gocache-")
	if err != nil {
		return o, nil, fmt.Errorf("ape: go build cache: %w", err)
	}
	o.GoCache = dir
	return o, func() { os.RemoveAll(dir) }, nil
}

// HasCheck reports whether file has a built-in check (by its extension);
// other files need a check command.
func HasCheck(file string) bool {
	switch path.Ext(file) {
	case ".go", ".py", ".java", ".rs", ".lean":
		return true
	}
	return false
}

func shellQuote(s string) string { return shtemplate.Quote(s) }
