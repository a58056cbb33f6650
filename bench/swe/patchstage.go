package swe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
	"github.com/patchbench/patchbench/repo"
)

// BaseFS is a [patch.FileSystem] over the files of one commit of a
// repository, read through the repository's cat-file process. The first
// reads are cached, so the repair's repeated reads of a file cost one round
// trip. It is
// not safe for concurrent use; make one per instance.
type BaseFS struct {
	ctx   context.Context
	repo  *repo.Repo
	rev   string
	cache map[string]baseEntry
	err   error // the first read error other than a missing file
}

type baseEntry struct {
	data []byte
	err  error
}

// Files is what the patch stage reads: the files of the base commit, as a
// [BaseFS] gives them.
type Files interface {
	// ReadFile returns a file's content, or an error wrapping
	// fs.ErrNotExist when the file is absent.
	patch.FileSystem
	// ListFiles lists every file, for edits that name none.
	ListFiles() ([]string, error)
}

// maxCached bounds the files a BaseFS keeps: an edit naming no file is tried
// against every file of the commit, which need not all stay in memory.
const maxCached = 256

// NewBaseFS returns the files of revision rev of r.
func NewBaseFS(ctx context.Context, r *repo.Repo, rev string) *BaseFS {
	return &BaseFS{ctx: ctx, repo: r, rev: rev, cache: map[string]baseEntry{}}
}

// ReadFile returns the content of name at the revision. A path absent there
// gives an error wrapping fs.ErrNotExist. A path the test stage could not
// write inside its worktree, by the rules of [patch.Root] (absolute, with
// "..", in .git, a symbolic link or beyond one in the tree), gives an error
// wrapping patch.ErrUnsafePath: the edit is refused here, as it would be
// when written.
func (b *BaseFS) ReadFile(name string) ([]byte, error) {
	if e, ok := b.cache[name]; ok {
		return e.data, e.err
	}
	var e baseEntry
	if e.err = patch.CheckPath(name); e.err == nil {
		e.data, e.err = b.repo.ReadFile(b.ctx, b.rev, name)
		lstat := b.lstat
		if e.err == nil {
			// Found: git reached it through trees, so only the file itself
			// can be a link; one tree read instead of one per directory.
			clean := path.Clean(name)
			lstat = func(p string) (fs.FileMode, string, error) {
				if p != clean {
					return fs.ModeDir, "", nil
				}
				return b.lstat(p)
			}
		}
		if lerr := patch.CheckLinks(name, lstat); lerr != nil && (e.err == nil || errors.Is(e.err, fs.ErrNotExist)) {
			e.data, e.err = nil, lerr
		}
	}
	if e.err != nil && !errors.Is(e.err, fs.ErrNotExist) && !errors.Is(e.err, patch.ErrUnsafePath) && b.err == nil {
		b.err = e.err
	}
	if len(b.cache) < maxCached {
		b.cache[name] = e
	}
	return e.data, e.err
}

// lstat describes a path of the tree for patch.CheckLinks.
func (b *BaseFS) lstat(name string) (fs.FileMode, string, error) {
	return b.repo.LstatMode(b.ctx, b.rev, name)
}

// mode is the permission a file of the revision is written with: 0755
// for an executable, else 0644.
func (b *BaseFS) mode(name string) fs.FileMode {
	if m, _, err := b.repo.Lstat(b.ctx, b.rev, name); err == nil && m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// Err returns the first error of a read that failed for a reason other than
// a missing file (git died, the context ended): the patch stage's verdict
// cannot be trusted then.
func (b *BaseFS) Err() error { return b.err }

// ListFiles lists every file at the revision, for patches that name no file.
func (b *BaseFS) ListFiles() ([]string, error) {
	files, err := b.repo.ListFiles(b.ctx, b.rev)
	if err != nil && b.err == nil {
		b.err = err
	}
	return files, err
}

func validPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return false
	}
	return path.Clean(p) == p && p != "." && !strings.HasPrefix(p, "../") && p != ".."
}

// PatchOutcome is the result of the patch stage for one instance.
type PatchOutcome struct {
	// Status is one of StatusEmptyPatch, StatusMalformed, StatusApplyFailed,
	// StatusApplied, StatusAppliedRepaired, StatusAlreadyApplied.
	Status string
	// Source is where the edit was found: "model_patch" or "full_output".
	Source    string
	Format    patch.Format
	Extracted string
	Repairs   []string
	Reason    string
	// Kind is why the engine refused the edit (status apply_failed from
	// the tolerant applier): repair's kind, or KindChangesNothing.
	Kind  repair.Kind
	Files []FileOutcome
	// Repaired is the canonical unified diff (status applied or
	// applied_repaired only).
	Repaired string
	// Results are the new file contents (status applied or applied_repaired
	// only).
	Results []patch.FileResult
}

// FileOutcome is what happened to one file of the edit: repair's report plus
// whether the file is created (absent at base) and whether it is a test file.
type FileOutcome struct {
	repair.FileReport
	Created bool `json:"created,omitempty"`
	Test    bool `json:"test,omitempty"`
}

// Patch runs the patch stage: it takes the edit from the prediction's
// model_patch, or from its full_output when model_patch holds none, repairs it
// and applies it in memory to fsys (the files at the base commit; nil when
// the prediction is blank).
//
// Classification:
//   - empty_patch: model_patch and full_output are both blank (or null);
//   - malformed: there is text, but no edit in it (repair.ErrNoEdit);
//   - apply_failed: an edit that does not fit the base files, with repair's
//     reason; an edit that leaves every file as it was (other than by being
//     already applied) is apply_failed with reason "the edit changes
//     nothing";
//   - already_applied: every change of the edit is already in the base files
//     (repair's already_applied): a success that changes nothing, with the
//     places in Files and the reason naming them;
//   - applied: the edit fits as written: taken from model_patch without
//     extraction, no file-level repair (such as a missing a/ b/ prefix),
//     every hunk placed at the exact tier, at offset 0 from its header's line
//     numbers, with no repair listed (such as recount or context-space); and,
//     checked independently, model_patch ends with a newline and is a
//     unified diff that package patch's strict parser and strict apply
//     (which behave as git apply) accept at base, giving the same files;
//   - applied_repaired: the edit fits after repairs, which are listed: the
//     file and hunk repairs of package repair, the tier for hunks placed
//     loosely ("whitespace", "indentation", "fuzzy"), "extracted" when
//     the edit was taken out of surrounding text, "full-output" when it
//     came from full_output, and, when only the strict check fails,
//     "final-newline" (the text's last line is unterminated, which git apply
//     calls a corrupt patch), "line-endings" (the patch or a file it touches
//     has carriage returns, and they differ) or "strict-mismatch".
func Patch(pred Prediction, fsys Files) PatchOutcome {
	var out PatchOutcome
	sources := []struct{ name, text string }{
		{"model_patch", deref(pred.ModelPatch)},
		{"full_output", pred.FullOutput},
	}
	blank := true
	var noEdit []string
	for _, s := range sources {
		if strings.TrimSpace(s.text) == "" {
			continue
		}
		blank = false
		opts := repair.Options{}
		if fsys != nil {
			opts.FS, opts.Files = fsys, fsys.ListFiles
		}
		res, err := repair.Repair(s.text, opts)
		if errors.Is(err, repair.ErrNoEdit) {
			why := trimRepairErr(err)
			for _, prefix := range []string{"no edit found: ", "extract: ", "no edit found: "} {
				why = strings.TrimPrefix(why, prefix)
			}
			noEdit = append(noEdit, fmt.Sprintf("%s: %s", s.name, why))
			continue
		}
		out.Source, out.Format, out.Extracted = s.name, res.Format, res.Extracted
		out.Files = fileOutcomes(res.Files)
		if err != nil {
			out.Status, out.Reason, out.Kind = StatusApplyFailed, trimRepairErr(err), repair.KindOf(err)
			return out
		}
		if res.Status == repair.StatusAlreadyApplied {
			out.Status, out.Reason, out.Results = StatusAlreadyApplied, alreadyWhere(res.Files), res.Results
			return out
		}
		canon := res.Canonical()
		text, perr := patch.Print(canon, patch.UDiff)
		if perr != nil {
			out.Status, out.Reason, out.Kind = StatusApplyFailed, fmt.Sprintf("cannot print the repaired patch: %v", perr), repair.KindInternal
			return out
		}
		if !changes(canon) {
			out.Status, out.Reason, out.Kind = StatusApplyFailed, "the edit changes nothing", KindChangesNothing
			return out
		}
		out.Repaired, out.Results = text, res.Results
		out.Repairs = repairsOf(s.name, res)
		if len(out.Repairs) == 0 {
			if why := strictCheck(s.text, fsys, res.Results); why != "" {
				out.Repairs = []string{why}
			}
		}
		out.Status = StatusApplied
		if len(out.Repairs) > 0 {
			out.Status = StatusAppliedRepaired
		}
		return out
	}
	if blank {
		out.Status, out.Reason = StatusEmptyPatch, "model_patch and full_output are empty"
		if pred.ModelPatch == nil && pred.FullOutput == "" {
			out.Reason = "model_patch is null"
		}
		return out
	}
	out.Status, out.Reason = StatusMalformed, "no edit in "+strings.Join(noEdit, "; ")
	return out
}

// KindChangesNothing is the refusal of an edit that placed leaves every
// file as it was (other than by being already applied).
const KindChangesNothing repair.Kind = "changes_nothing"

// alreadyWhere says where an already applied edit's changes are.
func alreadyWhere(files []repair.FileReport) string {
	var parts []string
	for _, fr := range files {
		name := fr.Path
		if name == "" {
			name = fr.OldPath
		}
		for _, h := range fr.Hunks {
			if h.Status == repair.StatusAlreadyApplied {
				parts = append(parts, fmt.Sprintf("%s hunk %d at line %d", name, h.Hunk, h.Line))
			}
		}
		if len(fr.Hunks) == 0 {
			parts = append(parts, name)
		}
	}
	return "already applied: " + strings.Join(parts, ", ")
}

// strictCheck applies text strictly and returns "" when it gives the same
// files as the repair, else the name of the repair it needed.
func strictCheck(text string, fsys patch.FileSystem, want []patch.FileResult) string {
	if !strings.HasSuffix(text, "\n") {
		return "final-newline"
	}
	p, err := patch.ParseUDiff(text, patch.DefaultParseOptions)
	if err == nil && len(p.Diagnostics) == 0 && len(p.Files) > 0 {
		var got []patch.FileResult
		if got, err = patch.Apply(p, fsys, patch.ApplyOptions{}); err == nil && sameFinal(got, want) {
			return ""
		}
	}
	cr := strings.Contains(text, "\r")
	for _, r := range want {
		if r.OldPath == "" {
			continue
		}
		if b, err := fsys.ReadFile(r.OldPath); err == nil && bytes.IndexByte(b, '\r') >= 0 {
			cr = true
		}
	}
	if cr {
		return "line-endings"
	}
	return "strict-mismatch"
}

func sameFinal(a, b []patch.FileResult) bool {
	pa, ca, ma := patch.Final(a)
	pb, cb, mb := patch.Final(b)
	if len(pa) != len(pb) {
		return false
	}
	for _, p := range pa {
		x, okx := ca[p]
		y, oky := cb[p]
		if okx != oky || (x == nil) != (y == nil) || !bytes.Equal(x, y) || ma[p] != mb[p] {
			return false
		}
	}
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func trimRepairErr(err error) string {
	return strings.TrimPrefix(err.Error(), "repair: ")
}

// changes reports whether p changes anything.
func changes(p *patch.Patch) bool {
	for _, fp := range p.Files {
		if len(fp.Hunks) > 0 || fp.Op != patch.Modify || fp.OldMode != fp.NewMode {
			return true
		}
	}
	return false
}

func fileOutcomes(frs []repair.FileReport) []FileOutcome {
	out := make([]FileOutcome, 0, len(frs))
	for _, fr := range frs {
		fo := FileOutcome{FileReport: fr}
		fo.Created = fr.Op == patch.Create.String() && fr.Status == repair.StatusApplied
		fo.Test = IsTestPath(fr.Path) || IsTestPath(fr.OldPath)
		out = append(out, fo)
	}
	return out
}

// repairsOf lists the repairs an applied edit needed; none means it fits as
// written.
func repairsOf(source string, res *repair.Result) []string {
	set := map[string]bool{}
	if source != "model_patch" {
		set["full-output"] = true
	}
	if res.Extracted != "" {
		set["extracted"] = true
	}
	for _, fr := range res.Files {
		for _, r := range fr.Repairs {
			set[r] = true
		}
		for _, h := range fr.Hunks {
			for _, r := range h.Repairs {
				set[r] = true
			}
			if h.Tier != "" && h.Tier != repair.TierExact {
				set[h.Tier] = true
			}
			if h.Offset != 0 {
				set["line-numbers"] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// IsTestPath reports whether p looks like a test file: a path with a
// directory named test, tests, testing, __tests__, spec or specs, or a file
// named test_*.py, *_test.py, conftest.py, *_test.go, *Test.java, *Tests.java,
// *Test.kt, *Tests.kt, *_test.rs, *.test.js (also .ts, .jsx, .tsx, .mjs),
// *.spec.js (same extensions) or *_spec.rb.
func IsTestPath(p string) bool {
	if p == "" {
		return false
	}
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		switch d {
		case "test", "tests", "testing", "__tests__", "spec", "specs":
			return true
		}
	}
	base := parts[len(parts)-1]
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch ext {
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || stem == "conftest"
	case ".go", ".rs":
		return strings.HasSuffix(stem, "_test")
	case ".java", ".kt":
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests")
	case ".js", ".ts", ".jsx", ".tsx", ".mjs":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")
	case ".rb":
		return strings.HasSuffix(stem, "_spec")
	}
	return false
}
