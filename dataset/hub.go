package dataset

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/patchbench/patchbench/hfhub"
)

// Hub is how a Hugging Face dataset id is fetched.
type Hub struct {
	// Getenv reads the client's settings (token, endpoint, cache; see
	// hfhub.FromEnv).
	Getenv func(string) string
	// Progress, when not nil, gets the download's progress; Terminal says
	// it is a terminal.
	Progress io.Writer
	Terminal bool
}

// InputError is an error of [Resolve] that is the caller's input: an id
// that cannot be parsed, bad settings, a dataset, revision or split that
// does not exist (an *hfhub.NotFoundError).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// Resolve turns a dataset argument into a local path for [Each]: a file
// or directory that exists as given, or anything that does not look like
// a Hugging Face dataset id, is returned as given (the reader reports
// what is wrong with it); an id OWNER/NAME[@REVISION][:SPLIT] is resolved
// to its split's Parquet files, downloaded into the cache or found there,
// and returned with the dataset (nil for a local path).
func Resolve(ctx context.Context, arg string, h Hub) (string, *hfhub.Dataset, error) {
	if _, err := os.Stat(arg); err == nil || !hfhub.LooksLikeRef(arg) {
		return arg, nil, nil
	}
	ref, err := hfhub.ParseRef(arg)
	if err != nil {
		return "", nil, &InputError{err}
	}
	getenv := h.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c, err := hfhub.FromEnv(getenv)
	if err != nil {
		return "", nil, &InputError{err}
	}
	c.Progress, c.Terminal = h.Progress, h.Terminal
	d, err := c.Resolve(ctx, ref)
	var nf *hfhub.NotFoundError
	if errors.As(err, &nf) {
		return "", nil, &InputError{err}
	}
	if err != nil {
		return "", nil, err
	}
	return d.Path, d, nil
}
