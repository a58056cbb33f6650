package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Bwrap runs commands in bubblewrap. Make one with [NewBwrap], which checks
// that bubblewrap works here.
//
// The command sees only this of the host's file system, at the same paths:
//
//   - read-only, the system directories /usr, /bin, /sbin, /lib, /lib32,
//     /lib64 and /libx32 (those that exist; on a merged-/usr system the
//     last ones are symbolic links into /usr and stay links), and the
//     entries of /etc that programs need (see [SystemEtc]);
//   - read-write, its work directory and Command.ExtraWritable;
//   - read-only, Command.ExtraReadOnly;
//   - a fresh tmpfs on /tmp (also HOME and TMPDIR), a minimal /dev
//     (null, zero, full, random, urandom, tty, pts, shm) and its own /proc.
//
// Nothing else: no home directories, no /root, no other checkouts, no
// /run or /var (the sockets of host services), no /sys. Of its work
// directory's parents the command sees only the path leading to it. The
// rest of its root is an empty read-only tmpfs.
//
// It runs in new user, PID, IPC, UTS, cgroup and network namespaces (the
// network one only holds a loopback interface, so not even the host's
// 127.0.0.1 is reachable; Command.Network shares the host's instead), with
// no capabilities, in a new session, and dies with its parent.
type Bwrap struct {
	path string
	// system holds the bwrap arguments that show the system directories,
	// computed once by NewBwrap.
	system []string
}

// NewBwrap finds bwrap in PATH and runs a probe sandbox with the options
// every run uses, since bubblewrap may be installed but unable to work (user
// namespaces disabled, or no permission to mount /proc in a container). The
// error says why bubblewrap cannot be used.
func NewBwrap(ctx context.Context) (*Bwrap, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("sandbox: bubblewrap is not installed (Debian package bubblewrap): %w", err)
	}
	b := &Bwrap{path: path, system: systemArgs("")}
	dir, err := os.MkdirTemp("", "patchbench-probe-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: probe bubblewrap: %w", err)
	}
	defer os.RemoveAll(dir)
	res, err := b.Run(ctx, Command{Dir: dir, Args: []string{"true"}, Timeout: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("sandbox: probe bubblewrap: %w", err)
	}
	if res.ExitCode != 0 {
		msg := strings.TrimSpace(string(res.Stderr))
		if msg == "" {
			msg = "no message"
		}
		return nil, fmt.Errorf("sandbox: bubblewrap does not work here: %s ... true: exit status %d: %s", path, res.ExitCode, msg)
	}
	return b, nil
}

// Name returns "bwrap".
func (b *Bwrap) Name() string { return "bwrap" }

// Run runs c in a bubblewrap sandbox.
func (b *Bwrap) Run(ctx context.Context, c Command) (Result, error) {
	fail := func(res Result, err error) (Result, error) {
		return res, fmt.Errorf("sandbox: run %s in bwrap: %w", describe(c), err)
	}
	dir, err := c.check()
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	args, err := b.args(c, dir)
	if err != nil {
		return fail(Result{ExitCode: -1}, err)
	}
	env := environ(baseEnv("/tmp"), c.Env)
	path := b.path
	if c.Namespace != 0 {
		enter, err := EnterArgs(c.Namespace, dir)
		if err != nil {
			return fail(Result{ExitCode: -1}, err)
		}
		path, args = enter[0], append(enter, args...)
	}
	res, err := run(ctx, spec{
		path: path, args: args, env: env, dir: dir, stdin: c.Stdin,
		timeout: c.Timeout, maxOutput: c.MaxOutput,
	})
	if err != nil {
		return fail(res, err)
	}
	return res, nil
}

// args returns bwrap's argv for c.
func (b *Bwrap) args(c Command, dir string) ([]string, error) {
	a := []string{b.path, "--die-with-parent", "--unshare-all"}
	if c.Network {
		a = append(a, "--share-net")
	}
	if c.Namespace != 0 {
		// Inside the namespace this process is its root: a user
		// namespace of the sandbox's own gives the command this
		// process's uid and gid back, as outside.
		a = append(a, "--unshare-user", "--uid", strconv.Itoa(os.Getuid()), "--gid", strconv.Itoa(os.Getgid()))
	}
	a = append(a, "--cap-drop", "ALL", "--new-session")
	a = append(a, b.system...)
	a = append(a, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	writable, readOnly, err := c.extraPaths()
	if err != nil {
		return nil, err
	}
	// After the tmpfs, so that paths under /tmp show; parents before
	// what is inside them, so that the deeper bind wins (a writable cache
	// inside a read-only toolchain, a read-only path inside the work
	// directory).
	type bind struct {
		path string
		rw   bool
	}
	binds := []bind{{dir, true}}
	for _, p := range readOnly {
		binds = append(binds, bind{p, false})
	}
	for _, p := range writable {
		binds = append(binds, bind{p, true})
	}
	sort.SliceStable(binds, func(i, j int) bool { return depth(binds[i].path) < depth(binds[j].path) })
	for _, m := range binds {
		op := "--ro-bind"
		if m.rw {
			op = "--bind"
		}
		a = append(a, op, m.path, m.path)
	}
	// The root is bubblewrap's tmpfs, holding the mount points: make it
	// read-only like the system directories.
	a = append(a, "--remount-ro", "/", "--chdir", dir, "--")
	pre, err := prlimitArgs(c.Limits)
	if err != nil {
		return nil, err
	}
	a = append(a, pre...)
	return append(a, c.Args...), nil
}

// depth counts the components of a clean absolute path ("/" has none).
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// SystemDirs are the top-level host directories every bubblewrap sandbox
// shows read-only, when they exist.
func SystemDirs() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
}

// SystemEtc are the entries of /etc every bubblewrap sandbox shows
// read-only, when they exist (a pattern matches with [filepath.Match]):
// what the dynamic loader, user, group and host name lookups, TLS
// certificates, time zones, locales, file types, fonts, Debian's
// alternatives and the Python and Java packages read. Left out on purpose:
// shadow and gshadow, /etc/ssl/private, the machine id, and configuration
// that may hold credentials (pip.conf, gitconfig, npmrc, wgetrc, ssh).
func SystemEtc() []string {
	return []string{
		"ld.so.cache", "ld.so.conf", "ld.so.conf.d",
		"passwd", "group", "nsswitch.conf",
		"hosts", "host.conf", "gai.conf", "resolv.conf", "protocols", "services", "networks",
		"ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki/tls/certs", "pki/ca-trust",
		"localtime", "timezone",
		"locale.alias", "locale.conf", "default/locale",
		"mime.types", "magic", "magic.mime", "fonts",
		"os-release", "debian_version", "lsb-release",
		"alternatives", "mtab",
		"python3", "python3.*", "java-*",
	}
}

// systemArgs returns the bubblewrap arguments that show the system
// directories and /etc entries of the file system at root ("" for the
// host's) at their paths in the sandbox. A symbolic link stays a link when
// it points into what the sandbox shows (/bin -> usr/bin, /etc/localtime ->
// /usr/share/zoneinfo/...); a link elsewhere (/etc/resolv.conf ->
// /run/...) is replaced by what it points to, and a dangling one is left
// out.
func systemArgs(root string) []string {
	shown := []string{"/usr", "/proc", "/dev"}
	var a []string
	add := func(p string) {
		fi, err := os.Lstat(root + p)
		if err != nil {
			return
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(root + p)
			if err != nil {
				return
			}
			abs := target
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(filepath.Dir(p), target)
			}
			for _, s := range shown {
				if abs == s || strings.HasPrefix(abs, s+"/") {
					a = append(a, "--symlink", target, p)
					return
				}
			}
			if _, err := os.Stat(root + p); err != nil {
				return
			}
		}
		a = append(a, "--ro-bind", root+p, p)
	}
	for _, d := range SystemDirs() {
		add(d)
	}
	for _, e := range SystemEtc() {
		if !strings.ContainsAny(e, "*?[") {
			add("/etc/" + e)
			continue
		}
		matches, _ := filepath.Glob(root + "/etc/" + e)
		for _, m := range matches {
			add(strings.TrimPrefix(m, root))
		}
	}
	return a
}
