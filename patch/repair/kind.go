package repair

import (
	"errors"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// Kind says why an edit, a file or a hunk was refused, from a fixed set,
// for programs to switch on; the reason beside it is for people. It is
// not part of the JSON report (docs/apply-json.md), which is unchanged.
type Kind string

// Kinds of refusal. The first three are input errors (the text or the
// options are at fault, whatever the files hold); KindWrite is a failure
// of the writes, not of the edit; the others are edits that do not fit
// the files.
const (
	KindNone Kind = ""
	// KindNoEdit: the text holds no edit in any known format.
	KindNoEdit Kind = "no_edit"
	// KindBadStrip: a fixed strip (--strip) the file names do not have
	// enough leading components for.
	KindBadStrip Kind = "bad_strip"
	// KindBadInput: an unknown format, a patch of several files for a
	// target (in both modes), or in strict mode a patch that does not
	// parse or names no file.
	KindBadInput Kind = "bad_input"

	// KindContextNotFound: a hunk's lines (or the lines it removes) fit
	// the file nowhere.
	KindContextNotFound Kind = "context_not_found"
	// KindAmbiguous: a hunk, a search-replace block or a file name fits
	// several places.
	KindAmbiguous Kind = "ambiguous"
	// KindUncertain: a hunk fits one place, but what it means there is
	// open (applied already or to apply again, lost context or lines to
	// remove, ...).
	KindUncertain Kind = "uncertain"
	// KindOverlap: two hunks of a file claim the same lines.
	KindOverlap Kind = "overlap"
	// KindFileNotFound: the file to change does not exist.
	KindFileNotFound Kind = "file_not_found"
	// KindFileExists: the file to create (or a rename's target) exists
	// with other content.
	KindFileExists Kind = "file_exists"
	// KindNoFile: the patch names no file and fits none or several, or
	// gives a target for several files.
	KindNoFile Kind = "no_file"
	// KindBadDeletion: the patch deletes a file but leaves lines in it.
	KindBadDeletion Kind = "bad_deletion"
	// KindBinary: a binary section that does not apply.
	KindBinary Kind = "binary"
	// KindUnsafePath: a path the root refuses (see patch.Root), or a
	// change to a symbolic link.
	KindUnsafePath Kind = "unsafe_path"
	// KindInternal: the engine's own check of a placed hunk failed.
	KindInternal Kind = "internal_check"
	// KindIO: a file could not be read.
	KindIO Kind = "io"
	// KindWrite: the lock, the recovery of an earlier write, the write
	// guard or a write failed; nothing was written.
	KindWrite Kind = "write"
)

// Input reports whether k is an input error: the text or the options are
// at fault, not the files (the CLI's exit status 2).
func (k Kind) Input() bool {
	return k == KindNoEdit || k == KindBadStrip || k == KindBadInput
}

// KindOf returns the kind of an error of [Apply] or [Repair], KindNone
// for other errors.
func KindOf(err error) Kind {
	var k kinded
	if errors.As(err, &k) {
		return k.kind
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindNone
}

// hunkKind is the kind of a hunk's refusal by the reason the placing
// gave: each reason the placing writes starts with its kind's words
// ("ambiguous:", "uncertain:", "internal check:"); the others say that
// the hunk's lines are not where it needs them.
func hunkKind(reason string) Kind {
	switch {
	case strings.HasPrefix(reason, "ambiguous"):
		return KindAmbiguous
	case strings.HasPrefix(reason, "uncertain"):
		return KindUncertain
	case strings.HasPrefix(reason, "internal check"):
		return KindInternal
	}
	return KindContextNotFound
}

// readKind is the kind of a failed read of a file the patch names.
func readKind(err error) Kind {
	if errors.Is(err, patch.ErrUnsafePath) {
		return KindUnsafePath
	}
	return KindIO
}

// Errors of a file's names, for their kinds.
var (
	errNoFile = errors.New("the patch names no file")
	errNoName = errors.New("cannot read a file name")
)

// kinded is an error that knows its kind; its message is the error's.
type kinded struct {
	error
	kind Kind
}

func (k kinded) Unwrap() error { return k.error }

// pathKind is the kind of a failure to resolve a file section's paths.
func pathKind(err error) Kind {
	var k kinded
	switch {
	case errors.Is(err, ErrStrip):
		return KindBadStrip
	case errors.Is(err, errNoName):
		return KindNoFile
	case errors.As(err, &k):
		return k.kind
	}
	return readKind(err)
}
