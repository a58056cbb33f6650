package repair

import (
	"errors"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// Binary sections are never repaired: a GIT binary patch carries the names
// of the old and new blobs, so it either fits the file exactly or not at
// all. The tolerant parser hands each binary section of a "diff --git"
// patch to the strict one and applies it strictly.

// isBinaryStart reports the line that starts the binary body of a git
// section.
func isBinaryStart(l string) bool {
	l = strings.TrimSuffix(l, "\r")
	return l == "GIT binary patch" || strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ")
}

// readBinary parses the binary section of f, whose body starts at line i,
// and returns the index of the first line after it: the next file header,
// or the end.
func readBinary(f *looseFile, lines []string, i int) int {
	end := i + 1
	for end < len(lines) && !strings.HasPrefix(lines[end], "diff --git ") &&
		!(strings.HasPrefix(lines[end], "--- ") && end+1 < len(lines) && strings.HasPrefix(lines[end+1], "+++ ")) {
		end++
	}
	// The section from its extended headers on, under a header whose names
	// the strict parser cannot misread: the names were read already, and
	// only the blocks, modes and blob names are wanted. A CRLF channel's
	// carriage returns are transport here, never content.
	var b strings.Builder
	b.WriteString("diff --git a/binary b/binary\n")
	for _, l := range lines[max(f.line, 1):end] {
		b.WriteString(strings.TrimSuffix(l, "\r"))
		b.WriteByte('\n')
	}
	p, err := patch.ParseUDiff(b.String(), patch.ParseOptions{Strip: 1})
	switch {
	case err != nil:
		// Line numbers of the section, shifted to the patch's.
		f.binErr = err
		var pe *patch.ParseError
		if errors.As(err, &pe) {
			pe.Line += max(f.line, 1) - 1
		}
	case len(p.Files) != 1 || !p.Files[0].Binary:
		f.binErr = errors.New("the binary section does not parse as one")
	default:
		f.bin = p.Files[0]
	}
	return end
}

// binaryFilesLine reads GNU diff's "Binary files X and Y differ" outside a
// git section as a binary change without data, nil when it names no files.
func binaryFilesLine(l string, line int) *looseFile {
	p, err := patch.ParseUDiff(strings.TrimSuffix(l, "\r")+"\n", patch.ParseOptions{Strip: 0})
	if err != nil || len(p.Files) != 1 {
		return nil
	}
	fp := p.Files[0]
	f := &looseFile{oldName: fp.OldPath, newName: fp.NewPath, op: fp.Op, line: line, bin: fp}
	if f.oldName == "" {
		f.oldName = "/dev/null"
	}
	if f.newName == "" {
		f.newName = "/dev/null"
	}
	return f
}

// repairBinary applies the binary section of lf strictly to the file.
func repairBinary(lf *looseFile, fr FileReport, oldPath, newPath string, ov *overlay) (FileReport, patch.FileResult, error) {
	name := newPath
	if name == "" {
		name = oldPath
	}
	fr.Binary = true
	var res patch.FileResult
	fail := func(reason string, kind Kind) (FileReport, patch.FileResult, error) {
		fr.Reason, fr.Kind = reason, kind
		return fr, res, &Error{File: name, Reason: reason, Err: ErrRefused, Kind: kind}
	}
	// Already there: a success that changes nothing.
	already := func(reason string) (FileReport, patch.FileResult, error) {
		fr.Status, fr.Reason = StatusAlreadyApplied, reason
		return fr, res, nil
	}
	if lf.binErr != nil {
		return fail(lf.binErr.Error(), KindBinary)
	}
	fp := *lf.bin
	fp.OldPath, fp.NewPath, fp.Op = oldPath, newPath, lf.op
	old := ""
	if fp.Op == patch.Create {
		if c, ok, err := ov.read(newPath); err != nil {
			return fail(err.Error(), readKind(err))
		} else if ok {
			if isBlob(c, fp.NewHash) {
				return already("the file already exists with this content")
			}
			return fail("the file to create already exists", KindFileExists)
		}
	} else {
		c, ok, err := ov.read(oldPath)
		if err != nil {
			return fail(err.Error(), readKind(err))
		}
		if !ok {
			return fail("the file does not exist", KindFileNotFound)
		}
		old = c
	}
	content, _, err := patch.ApplyFile(old, &fp, patch.ApplyOptions{})
	if err != nil {
		if fp.Op != patch.Delete && isBlob(old, fp.NewHash) {
			return already("the file already has the content the binary patch makes")
		}
		return fail(err.Error(), KindBinary)
	}
	fr.Status, fr.Op = StatusApplied, fp.Op.String()
	res = patch.FileResult{OldPath: oldPath, Path: newPath, Op: fp.Op, Binary: true}
	res.OldMode, res.Mode = patch.ResultModes(fp.Op, fp.OldMode, fp.NewMode)
	switch fp.Op {
	case patch.Create:
		res.OldPath = ""
	case patch.Delete:
		ov.files[oldPath] = nil
		return fr, res, nil
	case patch.Rename:
		ov.files[oldPath] = nil
	}
	res.Content = []byte(content)
	ov.files[newPath] = &content
	return fr, res, nil
}

// isBlob reports whether content has the blob name want, full or
// abbreviated (at least 7 digits, as git abbreviates).
func isBlob(content, want string) bool {
	return len(want) >= 7 && strings.Trim(want, "0") != "" && strings.HasPrefix(patch.BlobHash(content), want)
}
