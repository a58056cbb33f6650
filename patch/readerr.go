package patch

import (
	"errors"
	"strings"
)

// ForReading rewords a confinement error of [CheckPath], [CheckLinks] or
// [Root] for a tool that reads (a code search, one side of a diff): the
// same refusal, said of a read rather than of an edit. The error still
// wraps err, so errors.Is(..., ErrUnsafePath) holds. Other errors, and
// nil, are returned as they are.
func ForReading(err error) error {
	if !errors.Is(err, ErrUnsafePath) {
		return err
	}
	return readError{err}
}

// readWords maps the edit wording of the confinement errors to the read
// wording.
var readWords = strings.NewReplacer(
	"symbolic links are not edited", "symbolic links are not followed",
	"patch paths must be relative and stay inside the directory", "paths must be relative and stay inside the root",
	"patches may not touch .git", "nothing in .git is read",
)

type readError struct{ err error }

func (e readError) Error() string { return readWords.Replace(e.err.Error()) }
func (e readError) Unwrap() error { return e.err }
