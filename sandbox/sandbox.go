// Package sandbox runs untrusted commands, such as a repository's test suite
// after a model's patch, with limits on what they can reach and how long they
// can take.
//
// A [Runner] runs a [Command] and returns a [Result]. There are three:
//
//   - [Bwrap] runs the command in bubblewrap (Debian package bubblewrap): no
//     network (unless Command.Network), and of the host's file system only
//     the system directories (/usr, /bin, /sbin, /lib*, the /etc entries
//     programs need) and Command.ExtraReadOnly, read-only, Command.Dir and
//     Command.ExtraWritable, read-write, a fresh tmpfs on /tmp, a private
//     /dev and /proc: no home directories, no other checkouts, no host
//     service sockets. It has its own PID, IPC and UTS namespaces, no
//     capabilities, a new session, and --die-with-parent. [NewBwrap] checks
//     that bubblewrap actually works here (user namespaces may be
//     disabled) before it is used.
//   - [Plain] runs the command directly, with the same limits, timeout and
//     process-group kill but no isolation. It exists for machines without
//     bubblewrap; its Name says so, for reports.
//   - [Docker] runs the command in a container of Command.Image, with the
//     work directory, Command.ExtraWritable and Command.ExtraReadOnly
//     bind-mounted (no other host path) and --network none, when a Docker
//     engine answers. Image pulls are retried with exponential backoff, so registry
//     rate limits do not fail instances.
//
// [Detect] picks bubblewrap when it works and the plain runner otherwise.
//
// # Environment
//
// Bwrap and Plain start from an allow-list, not the caller's environment:
// PATH and TZ (the caller's, TZ when set), HOME and TMPDIR (the sandbox's
// /tmp for Bwrap, a private temporary directory for Plain), LANG=C.UTF-8;
// Command.Env is added on top and overrides by name. Nothing else passes
// (API keys, tokens, SSH_AUTH_SOCK). Docker passes only Command.Env; the
// image sets the rest.
//
// Test suites need a writable home and temporary directory, which they get.
// pytest needs nothing more (pass PYTHONDONTWRITEBYTECODE=1 to keep
// __pycache__ out of the work tree). A toolchain installed outside the
// system directories (under a home directory, /opt) must be listed in
// ExtraReadOnly. go test needs its toolchain (GOROOT, visible when under
// /usr), its build cache and the module cache: by default GOCACHE is
// $HOME/.cache/go-build, in the sandbox's tmpfs, which works but starts
// cold; GOMODCACHE must name a module cache listed in ExtraReadOnly and, as
// there is no network, GOFLAGS=-mod=mod, GOPROXY=off and GOTOOLCHAIN=local
// make missing modules and toolchains fail fast. To share a warm build
// cache, list it in ExtraWritable and set GOCACHE to it (the build cache is
// safe for concurrent use, but a sandboxed command can then write into it).
//
// # Limits
//
// Resource limits (Command.Limits) are set with prlimit(1) from util-linux,
// which sets them on itself and then executes the command, so they hold from
// the command's first instruction and are inherited by all its children. Go
// cannot set rlimits on a child between fork and exec, and setting them on
// the child after it started would race with it. For Docker, limits become
// --ulimit and --memory flags.
//
// Every command runs in its own process group. When Command.Timeout passes,
// or ctx ends, the whole group is killed with SIGKILL (with bubblewrap, the
// sandbox's PID namespace goes with it, so processes that started their own
// session die too); after a normal exit, whatever the command left running
// in its group is killed as well. If patchbench itself dies, the kernel
// kills the command (PR_SET_PDEATHSIG; strictly, when the OS thread that
// started it exits, which Go threads do not do unless locked). The plain
// runner cannot kill a process that started its own session; bubblewrap
// can.
//
// # Output
//
// Stdout and stderr are captured separately, each up to Command.MaxOutput
// bytes (DefaultMaxOutput if zero). Longer output keeps its first and last
// halves around a line saying how many bytes were left out, so a test log
// keeps both its start and its final summary; Result.StdoutTruncated and
// Result.StderrTruncated say when that happened.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// DefaultMaxOutput is the capture limit for each of stdout and stderr when
// Command.MaxOutput is zero.
const DefaultMaxOutput = 10 << 20

// Command is a command to run.
type Command struct {
	// Dir is the work directory: the command starts there, and it is the
	// one place (with ExtraWritable and the sandbox's /tmp) the command
	// can write to. It must exist.
	Dir string
	// Args is the command and its arguments. Args[0] is looked up in PATH
	// inside the sandbox if it has no slash.
	Args []string
	// Env holds extra "KEY=value" variables; they override the defaults
	// described in the package documentation.
	Env []string
	// Stdin is the command's standard input; nil means empty.
	Stdin io.Reader
	// Timeout, if positive, bounds the run: when it passes the command's
	// whole process tree is killed and Result.TimedOut is set.
	Timeout time.Duration
	// Network lets the command use the network. Without it, it has none
	// (bubblewrap and Docker; the plain runner cannot take it away).
	Network bool
	// ExtraWritable lists more directories the command may write to.
	ExtraWritable []string
	// ExtraReadOnly lists more files and directories of the host the
	// command may read, at the same paths: a toolchain installed outside
	// the system directories, a module cache. Bubblewrap and Docker show
	// the command nothing of the host's file system but their system
	// directories (Bwrap), Dir, ExtraWritable and these.
	ExtraReadOnly []string
	// Limits are resource limits for the command and its children.
	Limits Limits
	// MaxOutput caps the bytes kept of each of stdout and stderr; zero
	// means DefaultMaxOutput.
	MaxOutput int
	// Image is the container image, for the Docker runner only.
	Image string
	// Namespace, when not zero, is a process whose user and mount
	// namespaces the command runs in, and Dir is a path there: an
	// environment store's overlay that an ordinary user mounted in a
	// user namespace, which only that namespace's processes see
	// (envstore.RestoreResult.NamespacePID). Bubblewrap and the plain
	// runner enter them with nsenter(1) (util-linux) and run the command
	// with this process's uid and gid, in a user namespace of its own;
	// Docker cannot (its daemon does not see the mount) and refuses it.
	Namespace int
}

// EnterArgs returns the argv prefix that runs a program in the user and
// mount namespaces of process pid (which this user made, so it may enter
// them), in directory dir there. Entering a mount namespace moves a
// process to that namespace's root, so the prefix changes directory after
// entering, by a path resolved inside it: a directory given by path from
// outside would be the mount point under the overlay, not the overlay.
// Inside, the program runs as the namespace's root, mapped to this user.
func EnterArgs(pid int, dir string) ([]string, error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return nil, fmt.Errorf("entering a namespace needs nsenter (util-linux): %w", err)
	}
	return []string{nsenter, "--user", "--mount", "--target", strconv.Itoa(pid), "--preserve-credentials", "--",
		"/bin/sh", "-c", `cd -- "$0" && exec "$@"`, dir}, nil
}

// Limits are resource limits (setrlimit(2)). Zero means no limit.
type Limits struct {
	// AddressSpace limits virtual memory, in bytes (RLIMIT_AS). Runtimes
	// that reserve address space up front (Go, the JVM, some BLAS
	// builds) need a generous value. Docker applies it as --memory.
	AddressSpace uint64
	// CPUTime limits CPU time, rounded up to whole seconds (RLIMIT_CPU).
	CPUTime time.Duration
	// OpenFiles limits open file descriptors (RLIMIT_NOFILE).
	OpenFiles uint64
	// Processes limits the processes and threads of the user
	// (RLIMIT_NPROC). It counts every process of the same user, not only
	// the command's, and does not bind root.
	Processes uint64
	// FileSize limits the size of any file written, in bytes
	// (RLIMIT_FSIZE).
	FileSize uint64
}

// IsZero reports whether l sets no limit.
func (l Limits) IsZero() bool { return l == Limits{} }

// Result is how a command ended and what it wrote.
type Result struct {
	// ExitCode is the command's exit status, or 128+n if signal n killed
	// it (as shells report it), or -1 if it did not run.
	ExitCode int
	// Stdout and Stderr are the captured output, capped as the package
	// documentation describes.
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated report that output was left out.
	StdoutTruncated, StderrTruncated bool
	// TimedOut reports that Command.Timeout passed and the command was
	// killed.
	TimedOut bool
	// Duration is the wall-clock time from start to exit.
	Duration time.Duration
}

// Runner runs commands.
type Runner interface {
	// Run runs c and waits for it. A command that runs and fails (a
	// non-zero exit, a timeout) is not an error: see Result. The error is
	// for a command that could not be run, or whose ctx ended (the
	// command is killed, and the partial Result is returned with it).
	Run(ctx context.Context, c Command) (Result, error)
	// Name names the runner in reports: "bwrap", "unsandboxed",
	// "docker".
	Name() string
}

// Detect returns a [Bwrap] runner if bubblewrap is installed and works here,
// and [Plain] otherwise. [NewBwrap] tells why bubblewrap cannot be used.
func Detect(ctx context.Context) Runner {
	if b, err := NewBwrap(ctx); err == nil {
		return b
	}
	return Plain{}
}

// check validates c and returns its work directory, absolute.
func (c *Command) check() (string, error) {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return "", errors.New("no command")
	}
	if c.Dir == "" {
		return "", errors.New("no work directory")
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("work directory: %w", err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("work directory %s is not a directory", dir)
	}
	for _, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return "", fmt.Errorf("environment entry %q is not KEY=value", kv)
		}
	}
	return dir, nil
}

// describe names a command in error messages: its first argument and work
// directory.
func describe(c Command) string {
	name := "(none)"
	if len(c.Args) > 0 {
		name = c.Args[0]
	}
	return fmt.Sprintf("%s in %s", name, c.Dir)
}

// baseEnv is the environment a Bwrap or Plain command starts from, with home
// as HOME and TMPDIR: the caller's PATH and TZ (when set), LANG=C.UTF-8.
// Nothing else of the caller's environment (API keys, tokens) passes.
func baseEnv(home string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home, "LANG=C.UTF-8"}
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	return env
}

// extraPaths returns c.ExtraWritable and c.ExtraReadOnly checked and cleaned
// (see hostPaths).
func (c *Command) extraPaths() (writable, readOnly []string, err error) {
	if writable, err = hostPaths("writable", c.ExtraWritable, true); err != nil {
		return nil, nil, err
	}
	if readOnly, err = hostPaths("read-only", c.ExtraReadOnly, false); err != nil {
		return nil, nil, err
	}
	return writable, readOnly, nil
}

// hostPaths checks that each of paths is absolute and exists, as a directory
// when dirOnly, and returns them cleaned; what names them in errors.
func hostPaths(what string, paths []string, dirOnly bool) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%s path %q is not absolute", what, p)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s path: %w", what, err)
		}
		if dirOnly && !fi.IsDir() {
			return nil, fmt.Errorf("%s path %s is not a directory", what, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// environ merges base and extra; a later KEY= overrides an earlier one.
func environ(base, extra []string) []string {
	var out []string
	index := map[string]int{}
	for _, kv := range append(append([]string(nil), base...), extra...) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := index[k]; ok {
			out[i] = kv
			continue
		}
		index[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// prlimitArgs returns the prlimit(1) prefix that applies l, or nil if l sets
// nothing.
func prlimitArgs(l Limits) ([]string, error) {
	if l.IsZero() {
		return nil, nil
	}
	path, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("resource limits need prlimit (util-linux): %w", err)
	}
	args := []string{path}
	add := func(name string, v uint64) {
		if v > 0 {
			args = append(args, "--"+name+"="+strconv.FormatUint(v, 10))
		}
	}
	add("as", l.AddressSpace)
	add("cpu", cpuSeconds(l.CPUTime))
	add("nofile", l.OpenFiles)
	add("nproc", l.Processes)
	add("fsize", l.FileSize)
	return append(args, "--"), nil
}

// cpuSeconds rounds d up to whole seconds.
func cpuSeconds(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64((d + time.Second - 1) / time.Second)
}

// spec is one process to run: the program's path, its argv, environment and
// directory, and what else to do to kill it.
type spec struct {
	path      string
	args      []string
	env       []string
	dir       string
	stdin     io.Reader
	timeout   time.Duration
	maxOutput int
	// kill, if set, runs besides the process-group kill when the command
	// times out or ctx ends (Docker stops its container).
	kill func()
}

// run starts s in its own process group and waits for it, killing the group
// on timeout or when ctx ends, and capturing output.
func run(ctx context.Context, s spec) (Result, error) {
	res := Result{ExitCode: -1}
	max := s.maxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	stdout, stderr := newCapBuffer(max), newCapBuffer(max)
	outR, outW, err := os.Pipe()
	if err != nil {
		return res, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return res, err
	}
	cmd := &exec.Cmd{
		Path:   s.path,
		Args:   s.args,
		Env:    s.env,
		Dir:    s.dir,
		Stdin:  s.stdin,
		Stdout: outW,
		Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
		// A Stdin that is not a file is copied by a goroutine that
		// may block in Read: do not wait for it for long.
		WaitDelay: 2 * time.Second,
	}
	if err := ctx.Err(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return res, err
	}
	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return res, err
	}
	var readers sync.WaitGroup
	readers.Go(func() { io.Copy(stdout, outR) })
	readers.Go(func() { io.Copy(stderr, errR) })

	pgid := cmd.Process.Pid
	// reaped guards the process group id: once the leader is reaped, its
	// id may be reused, so nothing may signal the group after that.
	var mu sync.Mutex
	reaped := false
	killGroup := func() {
		mu.Lock()
		defer mu.Unlock()
		if !reaped {
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	if s.timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, s.timeout)
	}
	defer cancel()
	var killed sync.WaitGroup
	killed.Add(1)
	stop := context.AfterFunc(runCtx, func() {
		defer killed.Done()
		if s.kill != nil {
			s.kill()
		}
		killGroup()
	})

	// Wait for the leader to exit without reaping it, kill what it left
	// in its group, then reap it.
	waitExited(pgid)
	interrupted := !stop()
	if interrupted {
		killed.Wait()
	} else {
		killed.Done()
	}
	killGroup()
	mu.Lock()
	reaped = true
	mu.Unlock()
	waitErr := cmd.Wait()
	res.Duration = time.Since(start)

	// Normally the pipes close when the group dies. A process that left
	// the group (setsid) may hold them open: stop reading after a grace
	// period.
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()
	res.Stdout, res.StdoutTruncated = stdout.Bytes()
	res.Stderr, res.StderrTruncated = stderr.Bytes()

	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Exited():
			res.ExitCode = ws.ExitStatus()
		case ws.Signaled():
			res.ExitCode = 128 + int(ws.Signal())
		}
	}
	if interrupted {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		res.TimedOut = true
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, waitErr
	}
	return res, nil
}

// lookPath finds the program name in the directories of env's PATH, as
// execvp would; a name with a slash is returned as it is.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

// waitExited blocks until process pid has exited, leaving it unreaped
// (waitid with WNOWAIT), so its process group id cannot be reused yet.
func waitExited(pid int) {
	const (
		pPID    = 1
		wExited = 4
		wNoWait = 0x1000000
	)
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}

// capBuffer keeps the first half and the last half of at most max bytes
// written to it.
type capBuffer struct {
	mu       sync.Mutex
	headMax  int
	head     []byte
	tail     []byte // ring buffer once full
	tailMax  int
	tailPos  int
	tailFull bool
	total    int64
}

func newCapBuffer(max int) *capBuffer {
	if max < 2 {
		max = 2
	}
	return &capBuffer{headMax: max - max/2, tailMax: max / 2}
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= b.tailMax {
		b.tail = append(b.tail[:0], p[len(p)-b.tailMax:]...)
		b.tailPos, b.tailFull = 0, true
		return n, nil
	}
	if !b.tailFull {
		if room := b.tailMax - len(b.tail); len(p) <= room {
			b.tail = append(b.tail, p...)
			b.tailFull = len(b.tail) == b.tailMax
			return n, nil
		}
		// Fill the slice, then wrap.
		room := b.tailMax - len(b.tail)
		b.tail = append(b.tail, p[:room]...)
		p = p[room:]
		b.tailFull = true
		b.tailPos = 0
	}
	for len(p) > 0 {
		k := copy(b.tail[b.tailPos:], p)
		p = p[k:]
		b.tailPos = (b.tailPos + k) % b.tailMax
	}
	return n, nil
}

// Bytes returns the kept output, and whether some was left out.
func (b *capBuffer) Bytes() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := int64(len(b.head) + len(b.tail))
	out := append([]byte(nil), b.head...)
	if b.total > kept {
		out = fmt.Appendf(out, "\n[... %d bytes left out by patchbench ...]\n", b.total-kept)
	}
	if b.tailFull {
		out = append(out, b.tail[b.tailPos:]...)
		out = append(out, b.tail[:b.tailPos]...)
	} else {
		out = append(out, b.tail...)
	}
	return out, b.total > kept
}

// EntersNamespaces reports whether r can run a command inside another
// process's namespaces (Command.Namespace): bubblewrap and the plain
// runner can, Docker cannot.
func EntersNamespaces(r Runner) bool {
	switch r.(type) {
	case *Bwrap, Plain, *Plain:
		return true
	}
	return false
}
