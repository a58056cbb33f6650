package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// probe is what a probe program (testdata/probe) is asked to try, and what
// the sandbox must allow. Paths of the host; the sandbox shows them at the
// same paths or not at all.
type probe struct {
	denyList, denyRead, denyWrite []string
	allowList, allowRead          []string
	allowWrite                    []string
	connect                       string // a host listener: must not be reachable
	secretEnv                     string // set in the caller's environment: must not pass
}

func (p *probe) env() []string {
	join := func(a ...[]string) string {
		var all []string
		for _, s := range a {
			all = append(all, s...)
		}
		return strings.Join(all, "\n")
	}
	return []string{
		"PROBE_LIST=" + join(p.denyList, p.allowList),
		"PROBE_READ=" + join(p.denyRead, p.allowRead),
		"PROBE_WRITE=" + join(p.denyWrite, p.allowWrite),
		"PROBE_CONNECT=" + p.connect,
		"PROBE_ENV=" + p.secretEnv,
	}
}

var probeLine = regexp.MustCompile(`(?m)^probe (list|read|write|connect) (.+?): (ok|error)(?:: (.*))?$`)

// probeResults parses a probe's log: "OP TARGET" -> ok, detail.
func probeResults(log string) map[string]struct {
	ok     bool
	detail string
} {
	out := map[string]struct {
		ok     bool
		detail string
	}{}
	for _, m := range probeLine.FindAllStringSubmatch(log, -1) {
		out[m[1]+" "+m[2]] = struct {
			ok     bool
			detail string
		}{m[3] == "ok", m[4]}
	}
	return out
}

// check asserts the probe's log: every denied attempt failed, every allowed
// one worked. A denied directory may still list the mount points leading
// to the command's own paths (binds, the skeleton bubblewrap makes for
// them), and nothing else.
func (p *probe) check(t *testing.T, name, log string, binds []string) {
	t.Helper()
	got := probeResults(log)
	want := func(op, target string, ok bool) (string, bool) {
		r, found := got[op+" "+target]
		if !found {
			t.Errorf("%s: the probe did not report %s %s", name, op, target)
			return "", false
		}
		if r.ok != ok {
			t.Errorf("%s: %s %s: ok %v (%s), want %v", name, op, target, r.ok, r.detail, ok)
		}
		return r.detail, r.ok
	}
	for _, d := range p.denyList {
		entries, ok := got["list "+d]
		if !ok {
			t.Errorf("%s: the probe did not report list %s", name, d)
			continue
		}
		if !entries.ok {
			continue
		}
		// Listed: only the way to the command's own paths may show.
		skeleton := map[string]bool{}
		for _, b := range binds {
			if rel, err := filepath.Rel(d, b); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				skeleton[strings.Split(rel, string(filepath.Separator))[0]] = true
			}
		}
		for _, e := range strings.Fields(entries.detail) {
			if !skeleton[e] {
				t.Errorf("%s: list %s shows %q (all: %s)", name, d, e, entries.detail)
			}
		}
		if len(skeleton) == 0 {
			t.Errorf("%s: list %s worked: %s", name, d, entries.detail)
		}
	}
	for _, f := range p.denyRead {
		want("read", f, false)
	}
	for _, f := range p.denyWrite {
		want("write", f, false)
	}
	for _, d := range p.allowList {
		want("list", d, true)
	}
	for _, f := range p.allowRead {
		want("read", f, true)
	}
	for _, f := range p.allowWrite {
		want("write", f, true)
	}
	want("connect", p.connect, false)
	if !strings.Contains(log, "probe env "+p.secretEnv+": unset\n") {
		t.Errorf("%s: the caller's %s reached the command (or the probe did not say)", name, p.secretEnv)
	}
	if !strings.Contains(log, "probe home /tmp: ok\n") {
		t.Errorf("%s: HOME is not the sandbox's /tmp", name)
	}
}

// TestBwrapReadConfinement runs a Python probe (plain python3, and under
// pytest when installed) and a Go probe (go test, its toolchain added as a
// user adds it) in the bubblewrap sandbox. Each tries to list and read the
// caller's home, /root, the checkout these tests run in, files planted
// outside the sandbox's paths (in another temporary directory and in the
// checkout), /etc/shadow, host service sockets' directories, and to reach a
// listener on the host's loopback; all of that must fail, while the work
// directory and the read-only paths the command adds are readable (the
// latter not writable). A control run of the Python probe without the
// sandbox shows that the probe does see what it must not inside.
func TestBwrapReadConfinement(t *testing.T) {
	b := requireBwrap(t)
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3 (Debian package python3)")
	}
	ln := loopbackListener(t)

	work := t.TempDir()
	for _, f := range []string{"test_probe.py", "probe_test.go", "go.mod"} {
		data, err := os.ReadFile(filepath.Join("testdata", "probe", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, f), data, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	// Added read-only, as a user adds a toolchain.
	ro := t.TempDir()
	if err := os.WriteFile(filepath.Join(ro, "allowed.txt"), []byte("allowed\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	// Planted outside the sandbox's paths: in another temporary
	// directory, and in the checkout (not under /tmp, which the sandbox
	// replaces).
	outside := t.TempDir()
	plantedTmp := filepath.Join(outside, "planted.txt")
	planted, err := os.MkdirTemp(".", ".probe-planted-")
	if err != nil {
		t.Fatal(err)
	}
	planted, _ = filepath.Abs(planted)
	t.Cleanup(func() { os.RemoveAll(planted) })
	plantedHost := filepath.Join(planted, "planted.txt")
	for _, f := range []string{plantedTmp, plantedHost} {
		if err := os.WriteFile(f, []byte("secret\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	checkout, _ := filepath.Abs("..")
	if _, err := os.Stat(filepath.Join(checkout, "go.mod")); err != nil {
		t.Fatalf("the checkout is not at %s: %v", checkout, err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	p := &probe{
		denyList: []string{home, "/root", "/root/.ssh", "/home", checkout, filepath.Dir(checkout), outside, planted,
			"/run", "/var/run", "/var", "/etc/ssl/private", "/sys", "/opt", "/mnt"},
		denyRead: []string{filepath.Join(checkout, "go.mod"), filepath.Join(checkout, "sandbox", "probe_test.go"),
			plantedTmp, plantedHost, "/etc/shadow", "/etc/gshadow", "/etc/machine-id"},
		denyWrite:  []string{filepath.Join(ro, "new.txt"), "/etc/probe.txt", "/usr/probe.txt", "/probe.txt"},
		allowList:  []string{work, ro},
		allowRead:  []string{filepath.Join(work, "go.mod"), filepath.Join(ro, "allowed.txt"), "/etc/passwd", "/etc/hosts"},
		allowWrite: []string{filepath.Join(work, "written.txt"), "/tmp/written.txt"},
		connect:    ln.Addr().String(),
		secretEnv:  "PATCHBENCH_PROBE_SECRET",
	}
	// A file of the caller's home, found as the host sees it.
	if entries, err := os.ReadDir(home); err == nil {
		for _, e := range entries {
			if e.Type().IsRegular() {
				p.denyRead = append(p.denyRead, filepath.Join(home, e.Name()))
				break
			}
		}
	}
	t.Setenv(p.secretEnv, "s3cret")

	base := Command{
		Dir:           work,
		Env:           append(p.env(), "PYTHONDONTWRITEBYTECODE=1"),
		ExtraReadOnly: []string{ro},
		Timeout:       5 * time.Minute,
	}
	runProbe := func(name string, r Runner, c Command) string {
		t.Helper()
		res, err := r.Run(t.Context(), c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		log := string(res.Stdout) + string(res.Stderr)
		t.Logf("%s (%s): exit %d\n%s", name, r.Name(), res.ExitCode, log)
		if res.ExitCode != 0 {
			t.Errorf("%s: exit %d", name, res.ExitCode)
		}
		os.Remove(filepath.Join(work, "written.txt"))
		return log
	}

	c := base
	c.Args = []string{python, "test_probe.py"}
	p.check(t, "python3", runProbe("python3", b, c), []string{work, ro})

	if exec.Command(python, "-c", "import pytest").Run() == nil {
		c.Args = []string{python, "-m", "pytest", "-s", "-p", "no:cacheprovider", "test_probe.py"}
		log := runProbe("pytest", b, c)
		p.check(t, "pytest", log, []string{work, ro})
		if !strings.Contains(log, "1 passed") {
			t.Errorf("pytest did not pass the probe")
		}
	} else {
		t.Log("no pytest for /usr/bin/python3 (apt-get install python3-pytest): plain python3 only")
	}

	// The control: without the sandbox the probe reads what the host can.
	c.Args = []string{python, "test_probe.py"}
	control := probeResults(runProbe("control", Plain{}, c))
	for _, f := range p.denyRead {
		if _, err := os.ReadFile(f); err == nil && !control["read "+f].ok {
			t.Errorf("control: the probe cannot read %s without the sandbox: %s", f, control["read "+f].detail)
		}
	}
	if !control["connect "+p.connect].ok {
		t.Errorf("control: the probe cannot reach %s without the sandbox", p.connect)
	}

	// go test in the sandbox, with the toolchain and caches added as a
	// user adds them: GOROOT and the module cache read-only, the build
	// cache writable.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Log("no go in PATH: Go probe skipped")
		return
	}
	goEnv := func(name string) string {
		out, err := exec.Command(goBin, "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	goroot, gocache, gomodcache := goEnv("GOROOT"), goEnv("GOCACHE"), goEnv("GOMODCACHE")
	c = base
	c.Args = []string{filepath.Join(goroot, "bin", "go"), "test", "-count=1", "-v", "."}
	c.ExtraReadOnly = append(c.ExtraReadOnly, goroot)
	if _, err := os.Stat(gomodcache); err == nil {
		c.ExtraReadOnly = append(c.ExtraReadOnly, gomodcache)
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if fi, err := os.Stat(gocache); err != nil || !fi.IsDir() {
		gocache = t.TempDir()
	}
	c.ExtraWritable = []string{gocache}
	c.Env = append(c.Env, "GOROOT="+goroot, "GOCACHE="+gocache, "GOMODCACHE="+gomodcache,
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "GOTELEMETRY=off")
	log := runProbe("go test", b, c)
	p.check(t, "go test", log, append([]string{work}, append(c.ExtraReadOnly, c.ExtraWritable...)...))
	if !strings.Contains(log, "--- PASS: TestProbe") {
		t.Errorf("go test did not pass the probe")
	}
}
