package patch

import (
	"errors"
	"testing"
)

func TestForReading(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`unsafe path "l": a symbolic link (-> x); symbolic links are not edited`, `unsafe path "l": a symbolic link (-> x); symbolic links are not followed`},
		{`unsafe path "/a": patch paths must be relative and stay inside the directory`, `unsafe path "/a": paths must be relative and stay inside the root`},
		{`unsafe path "a/.GIT/x": patches may not touch .git (component ".GIT")`, `unsafe path "a/.GIT/x": nothing in .git is read (component ".GIT")`},
		{`open a.txt: no such file or directory`, `open a.txt: no such file or directory`},
	} {
		in := errors.New(c.in)
		if c.in != c.want {
			in = wrapUnsafe(c.in)
		}
		got := ForReading(in)
		if got.Error() != c.want {
			t.Errorf("ForReading(%q) = %q, want %q", c.in, got, c.want)
		}
		if c.in != c.want && !errors.Is(got, ErrUnsafePath) {
			t.Errorf("ForReading(%q) no longer wraps ErrUnsafePath", c.in)
		}
	}
	// The real refusals, reworded.
	if err := ForReading(CheckPath("sub/.git/config")); err == nil || err.Error() != `unsafe path "sub/.git/config": nothing in .git is read (component ".git")` {
		t.Errorf("CheckPath of a nested .git, for reading: %v", err)
	}
	if ForReading(nil) != nil {
		t.Error("ForReading(nil) is not nil")
	}
}

// wrapUnsafe makes an error wrapping ErrUnsafePath whose text is msg.
func wrapUnsafe(msg string) error { return unsafeErr(msg) }

type unsafeErr string

func (e unsafeErr) Error() string { return string(e) }
func (e unsafeErr) Unwrap() error { return ErrUnsafePath }
