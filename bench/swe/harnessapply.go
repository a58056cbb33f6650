package swe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
)

// Appliers of the patch stage (Config.Apply).
const (
	// ApplyTolerant extracts, repairs and places the edit (package
	// repair): the default.
	ApplyTolerant = "tolerant"
	// ApplyOfficial runs the official harness's chain on the raw
	// model_patch (see [HarnessChain]).
	ApplyOfficial = "official"
	// ApplyGit runs git apply alone on the raw model_patch.
	ApplyGit = "git"
)

// HarnessChain is the commands SWE-bench's run_evaluation.py tries in turn
// on the prediction (its GIT_APPLY_CMDS), each given the patch file; the
// first that exits 0 applied it. Versions before the --reject step ran
// "git apply -v" and then the patch command; see docs/swe.md.
var HarnessChain = [][]string{
	{"git", "apply", "--verbose"},
	{"git", "apply", "--verbose", "--reject"},
	{"patch", "--batch", "--fuzz=5", "-p1", "-i"},
}

// harnessApplyTimeout bounds each command of the chain.
const harnessApplyTimeout = 2 * time.Minute

// HarnessApply is what an apply chain did with a raw patch.
type HarnessApply struct {
	// Status is applied, malformed (git apply said "corrupt patch" or
	// patch said "malformed patch" and nothing applied it), apply_failed,
	// or empty_patch (model_patch is "" or null: the harness does not run
	// it).
	Status string
	// Command is the command that applied the patch.
	Command string
	// Output is the output of the command that applied the patch, or of
	// the last one tried when none did (what the harness logs after its
	// marker).
	Output string
	// Log is the apply part of the harness's run_instance.log: a line per
	// command that failed, then the marker and Output.
	Log string
	// Restored lists the files put back from their .orig backups after
	// the patch applied, as the harness does when it finds any (it reads
	// them as a reversed patch).
	Restored []string
	// Results are the files as the chain left them, base files that it
	// did not change left out (applied only).
	Results []patch.FileResult
}

// Reason says why the chain did not apply the patch: the last command's
// last line of output.
func (h HarnessApply) Reason() string {
	switch h.Status {
	case StatusApplied:
		return ""
	case StatusEmptyPatch:
		return "model_patch is empty"
	}
	return "the official apply chain failed: " + lastLine([]byte(h.Output))
}

// runHarnessChain applies raw as the official harness does (chain
// ApplyOfficial) or with git apply alone (ApplyGit), in a directory
// holding the base files the patch names (read from fsys), and returns
// what the commands did and the files they left. The commands see only
// that directory: every path they could reach is a copy.
func runHarnessChain(ctx context.Context, fsys *BaseFS, raw, chain string) (HarnessApply, error) {
	if raw == "" {
		return HarnessApply{Status: StatusEmptyPatch}, nil
	}
	cmds := HarnessChain
	if chain == ApplyGit {
		cmds = HarnessChain[:1]
	}
	tmp, err := os.MkdirTemp("", "patchbench-harness-")
	if err != nil {
		return HarnessApply{}, err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "testbed")
	patchFile := filepath.Join(tmp, "patch.diff")
	if err := os.WriteFile(patchFile, []byte(raw), 0o644); err != nil {
		return HarnessApply{}, err
	}
	base := map[string]baseFile{}
	for _, name := range patchPaths(raw) {
		data, err := fsys.ReadFile(name)
		if err != nil {
			continue // absent, or a path no tree may hold
		}
		mode := fsys.mode(name)
		dst := filepath.Join(tree, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return HarnessApply{}, err
		}
		if err := os.WriteFile(dst, data, mode); err != nil {
			return HarnessApply{}, err
		}
		base[name] = baseFile{data: data, mode: mode}
	}
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return HarnessApply{}, err
	}
	if err := fsys.Err(); err != nil {
		return HarnessApply{}, err
	}
	var h HarnessApply
	var log strings.Builder
	var outputs []string
	applied := false
	for _, argv := range cmds {
		out, code, err := runTool(ctx, tree, tmp, append(append([]string{}, argv...), patchFile))
		if err != nil {
			return HarnessApply{}, err
		}
		h.Output = out
		outputs = append(outputs, out)
		if code == 0 {
			h.Command = strings.Join(argv, " ")
			applied = true
			break
		}
		fmt.Fprintf(&log, "Failed to apply patch to container: %s\n", strings.Join(argv, " "))
	}
	if !applied {
		fmt.Fprintf(&log, "%s:\n%s\n", LogApplyPatchFail, h.Output)
		h.Log = log.String()
		h.Status = StatusApplyFailed
		for _, o := range outputs {
			if strings.Contains(o, "corrupt patch") || strings.Contains(o, "malformed patch") {
				h.Status = StatusMalformed
			}
		}
		return h, nil
	}
	// As the harness: a .orig file anywhere after a command applied means
	// a reversed patch to it; every .orig file is moved back.
	origs, err := findOrig(tree)
	if err != nil {
		return HarnessApply{}, err
	}
	for _, o := range origs {
		if err := os.Rename(filepath.Join(tree, filepath.FromSlash(o)), filepath.Join(tree, filepath.FromSlash(strings.TrimSuffix(o, ".orig")))); err != nil {
			return HarnessApply{}, err
		}
		h.Restored = append(h.Restored, strings.TrimSuffix(o, ".orig"))
	}
	if len(origs) > 0 {
		log.WriteString("Detected reverse patch, restored files from .orig and treating as already applied\n")
	}
	fmt.Fprintf(&log, "%s:\n%s\n", LogApplyPatchPass, h.Output)
	h.Log = log.String()
	h.Status = StatusApplied
	if h.Results, err = treeResults(tree, base); err != nil {
		return HarnessApply{}, err
	}
	return h, nil
}

type baseFile struct {
	data []byte
	mode fs.FileMode
}

// runTool runs a command of the chain in dir with a fixed environment:
// English messages (which the classes are read from), no user or system
// git configuration, no repository above dir.
func runTool(ctx context.Context, dir, home string, argv []string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, harnessApplyTimeout)
	defer cancel()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}
	var cmd *exec.Cmd
	if argv[0] == "git" {
		cmd = repo.Command(ctx, dir, env, argv[1:]...)
	} else {
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0, nil
	case ctx.Err() != nil:
		return "", 0, fmt.Errorf("%s: %w", argv[0], ctx.Err())
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode(), nil
	}
	return "", 0, fmt.Errorf("run %s: %w", argv[0], err)
}

// findOrig lists the regular files named *.orig under dir, slash-separated
// and relative to it, sorted.
func findOrig(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".orig") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// treeResults compares the files under dir with base and returns the
// changes: files changed or made (the .rej and .orig files the commands
// leave are made files too, as in the harness's tree) and base files gone.
// Symbolic links are left out: the test stage writes none.
func treeResults(dir string, base map[string]baseFile) ([]patch.FileResult, error) {
	seen := map[string]bool{}
	var out []patch.FileResult
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := uint32(0o100644)
		if info.Mode()&0o111 != 0 {
			mode = 0o100755
		}
		b, ok := base[rel]
		switch {
		case !ok:
			out = append(out, patch.FileResult{Path: rel, Op: patch.Create, Content: data, Mode: mode})
		case !bytes.Equal(b.data, data) || (b.mode&0o111 != 0) != (mode == 0o100755):
			out = append(out, patch.FileResult{OldPath: rel, Path: rel, Op: patch.Modify, Content: data, Mode: mode})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for name := range base {
		if !seen[name] {
			out = append(out, patch.FileResult{OldPath: name, Op: patch.Delete})
		}
	}
	sort.Slice(out, func(i, j int) bool { return resultPath(out[i]) < resultPath(out[j]) })
	return out, nil
}

// sameFiles reports whether two sets of results leave the same files:
// the same paths, contents, and executable bits (a mode of 0, unchanged
// or unknown, counts as a plain file).
func sameFiles(a, b []patch.FileResult) bool {
	pa, ca, ma := patch.Final(a)
	pb, cb, mb := patch.Final(b)
	if len(pa) != len(pb) {
		return false
	}
	exec := func(m uint32) bool { return m&0o111 != 0 }
	for _, p := range pa {
		x, okx := ca[p]
		y, oky := cb[p]
		if okx != oky || (x == nil) != (y == nil) || !bytes.Equal(x, y) || exec(ma[p]) != exec(mb[p]) {
			return false
		}
	}
	return true
}

func resultPath(r patch.FileResult) string {
	if r.Path != "" {
		return r.Path
	}
	return r.OldPath
}

// resultsDiff prints the change results make to the files of fsys as one
// unified diff, for patch.diff and the official images.
func resultsDiff(fsys patch.FileSystem, results []patch.FileResult) (string, error) {
	var p patch.Patch
	for _, r := range results {
		var old string
		if r.OldPath != "" {
			b, err := fsys.ReadFile(r.OldPath)
			if err != nil {
				return "", err
			}
			old = string(b)
		}
		fp := patch.Make(r.OldPath, r.Path, old, string(r.Content), patch.DefaultMakeOptions())
		if r.Op == patch.Create {
			fp.NewMode = r.Mode
		}
		p.Files = append(p.Files, fp)
	}
	if len(p.Files) == 0 {
		return "", nil
	}
	return patch.Print(&p, patch.UDiff)
}

// patchPaths lists the paths a patch text may name for git apply -p1 or
// patch -p1: every name of a diff --git, ---, +++, Index:, *** or rename
// and copy line, as written and with its first component removed, those
// that are valid relative paths, sorted and without repeats.
func patchPaths(text string) []string {
	set := map[string]bool{}
	add := func(name string) {
		name = strings.TrimSpace(name)
		if i := strings.IndexByte(name, '\t'); i >= 0 {
			name = name[:i]
		}
		if strings.HasPrefix(name, `"`) {
			if u, err := strconv.Unquote(name); err == nil {
				name = u
			}
		}
		for _, n := range []string{name, stripFirst(name)} {
			if n != "" && validPath(n) {
				set[n] = true
			}
		}
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			for _, f := range strings.Fields(strings.TrimPrefix(line, "diff --git ")) {
				add(f)
			}
		case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "*** "):
			add(line[4:])
		case strings.HasPrefix(line, "Index: "):
			add(line[7:])
		default:
			for _, k := range []string{"rename from ", "rename to ", "copy from ", "copy to "} {
				if strings.HasPrefix(line, k) {
					add(line[len(k):])
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func stripFirst(name string) string {
	name = strings.TrimLeft(name, "/")
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return path.Clean(name[i+1:])
	}
	return ""
}
