//go:build !cgo

package symbols

import (
	"context"
	"errors"
	"testing"
)

// TestNoGrammars: a build without cgo refuses, naming why, instead of
// returning an empty symbol list that would read as "no functions".
func TestNoGrammars(t *testing.T) {
	_, err := Parse(context.Background(), "a.py", []byte("def f():\n    pass\n"))
	if !errors.Is(err, ErrNoGrammars) {
		t.Fatalf("Parse(a.py) = %v, want ErrNoGrammars", err)
	}
	_, err = Parse(context.Background(), "a.txt", nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Parse(a.txt) = %v, want ErrUnsupported", err)
	}
}
