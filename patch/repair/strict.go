package repair

import (
	"strings"
	"unsafe"

	"github.com/patchbench/patchbench/patch"
)

// applyStrict applies a well-formed unified diff as `apply --strict` (and
// git apply) would, so that tolerant mode accepts everything strict mode
// does, with the same bytes, and reports no repair for a patch git takes as
// written. It reports false, leaving res alone, when the text does not
// parse strictly, a name is not one strict mode would read the same way, or
// a hunk does not apply: the repair pipeline then takes over.
func applyStrict(text string, opts Options, res *Result) bool {
	if opts.FS == nil || (opts.Format != "" && opts.Format != patch.UDiff) {
		return false
	}
	if f, ok := patch.Detect(text); !ok || f != patch.UDiff || crlfHeaders(text) {
		return false
	}
	strip := 1
	if opts.FixedStrip {
		strip = opts.Strip
	}
	p, err := patch.Parse(text, patch.UDiff, patch.ParseOptions{Strip: strip})
	if err != nil || len(p.Files) == 0 {
		return false
	}
	if !opts.FixedStrip && !prefixedNames(text) && (opts.Target != "" || !p1Evident(text, p, opts.FS)) {
		// Without a/ and b/ the pipeline decides per file which component
		// to strip; strict mode's fixed -p1 could name another file.
		return false
	}
	if opts.Target != "" {
		if len(p.Files) != 1 {
			return false
		}
		Retarget(p.Files[0], opts.Target)
	}
	for _, fp := range p.Files {
		if fp.Path() == "" {
			return false
		}
		for _, name := range []string{fp.OldPath, fp.NewPath} {
			if name != "" && patch.CheckPath(name) != nil {
				return false
			}
		}
	}
	// strictOnce and Apply read each file through rec: once.
	rec := &recordFS{fsys: opts.FS}
	if !strictOnce(p, rec, opts.Reverse) {
		// A hunk applied already at its own place, which git would apply
		// again where its context repeats: the pipeline judges it.
		return false
	}
	results, err := patch.Apply(p, rec, patch.ApplyOptions{Reverse: opts.Reverse, Git: true})
	if err != nil {
		return false
	}
	res.Format = patch.UDiff
	rec.fill(res, results)
	return true
}

// Retarget points a single-file patch at target, as --target does.
func Retarget(fp *patch.FilePatch, target string) {
	switch fp.Op {
	case patch.Create:
		fp.NewPath = target
	case patch.Delete:
		fp.OldPath = target
	default:
		fp.OldPath, fp.NewPath, fp.Op = target, target, patch.Modify
	}
}

// crlfHeaders reports whether the patch's own header lines end in CRLF:
// it went through a CRLF channel, the pipeline assumes, and the files
// decide whether a CR in a body line is content. (A diff of a CRLF file
// has CRs only in its body lines.)
func crlfHeaders(text string) bool {
	for l := range strings.Lines(text) { // no slice of every line: the patch may be large
		if strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "diff --git ") {
			if strings.HasSuffix(l, "\r\n") {
				return true
			}
		}
	}
	return false
}

// prefixedNames reports whether every ---/+++ header pair of a unified
// diff names a/ and b/ paths (or /dev/null).
func prefixedNames(text string) bool {
	// Line by line, keeping the one before, with no slice of every line:
	// the patch may be large.
	prev := ""
	for l := range strings.Lines(text) {
		l = strings.TrimSuffix(l, "\n")
		if strings.HasPrefix(prev, "--- ") && strings.HasPrefix(l, "+++ ") {
			o, n := headerName(prev[4:]), headerName(l[4:])
			if !(strings.HasPrefix(o, "a/") || o == "/dev/null") || !(strings.HasPrefix(n, "b/") || n == "/dev/null") {
				return false
			}
		}
		prev = l
	}
	return true
}

// p1Evident reports whether git apply's -p1 reading of a patch without
// a/ and b/ prefixes (GNU diff -ruN old new: "--- old/x", "+++ new/x") is
// the one the files confirm: every file the patch reads exists with its
// first component stripped and not as written, and there is at least one.
// The files the patch creates then go where git apply puts them too.
func p1Evident(text string, p1 *patch.Patch, fsys patch.FileSystem) bool {
	p0, err := patch.Parse(text, patch.UDiff, patch.ParseOptions{Strip: 0})
	if err != nil || len(p0.Files) != len(p1.Files) {
		return false
	}
	exists := func(name string) bool {
		_, err := fsys.ReadFile(name)
		return err == nil
	}
	read := 0
	for i, fp := range p1.Files {
		if fp.OldPath == "" {
			continue
		}
		if patch.CheckPath(fp.OldPath) != nil || !exists(fp.OldPath) || exists(p0.Files[i].OldPath) {
			return false
		}
		read++
	}
	return read > 0
}

// recordFS keeps the first content read of each file, for the canonical
// diff, without reading it twice.
type recordFS struct {
	fsys patch.FileSystem
	orig map[string]string
}

func (r *recordFS) ReadFile(name string) ([]byte, error) {
	if c, ok := r.orig[name]; ok {
		// Read before: the same bytes, which no reader changes (patch
		// reads them as a string).
		return unsafe.Slice(unsafe.StringData(c), len(c)), nil
	}
	b, err := r.fsys.ReadFile(name)
	if err != nil {
		return b, err
	}
	if r.orig == nil {
		r.orig = map[string]string{}
	}
	if _, ok := r.orig[name]; !ok {
		// The bytes are the caller's and nothing changes them.
		r.orig[name] = unsafe.String(unsafe.SliceData(b), len(b))
	}
	return b, nil
}

// fill makes res the outcome of results applied by patch.Apply.
func (r *recordFS) fill(res *Result, results []patch.FileResult) {
	res.Files = res.Files[:0]
	for _, x := range results {
		res.Files = append(res.Files, ResultReport(x))
	}
	res.Results, res.orig, res.Status = results, r.orig, StatusApplied
}
