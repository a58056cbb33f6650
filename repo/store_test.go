package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// countClones counts "git clone" invocations in a fakeGit log.
func countClones(t *testing.T, logFile string) int {
	t.Helper()
	data, err := os.ReadFile(logFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	} else if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "clone ") {
			n++
		}
	}
	return n
}

func TestStoreClonesOnce(t *testing.T) {
	src := t.TempDir()
	f := newFixture(t, filepath.Join(src, "django", "django"))
	logFile := fakeGit(t)
	for _, base := range []string{"file://" + src, src + "/"} {
		t.Run(base, func(t *testing.T) {
			s := &Store{Dir: t.TempDir(), BaseURL: base}
			defer s.Close()
			before := countClones(t, logFile)

			const n = 20
			repos := make([]*Repo, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := s.Get(t.Context(), "django/django")
					if err != nil {
						t.Error(err)
					}
					repos[i] = r
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			for i, r := range repos {
				if r != repos[0] {
					t.Fatalf("Get %d returned another *Repo", i)
				}
			}
			if got := countClones(t, logFile) - before; got != 1 {
				t.Errorf("%d clones, want 1", got)
			}
			r := repos[0]
			if r.Name() != "django/django" {
				t.Errorf("Name() = %q", r.Name())
			}
			got, err := r.ReadFile(t.Context(), f.c1[:8], "a.txt")
			if err != nil || string(got) != "one\n" {
				t.Errorf("ReadFile = %q, %v", got, err)
			}
			// A mirror: bare, with a worktree for the test stage.
			mirror := filepath.Join(s.Dir, "django", "django")
			if bare := git(t, mirror, "rev-parse", "--is-bare-repository"); bare != "true" {
				t.Errorf("clone is not bare")
			}
			w, err := r.AddWorktree(t.Context(), f.c2, filepath.Join(t.TempDir(), "wt"))
			if err != nil {
				t.Fatal(err)
			}
			checkTree(t, w.Dir, f.at2)
			if err := w.Remove(t.Context()); err != nil {
				t.Error(err)
			}
			// No temporary directories left next to it.
			entries, _ := os.ReadDir(filepath.Join(s.Dir, "django"))
			if len(entries) != 1 {
				t.Errorf("store holds %v, want only the clone", entries)
			}

			// A second store on the same directory finds the clone.
			s2 := &Store{Dir: s.Dir, BaseURL: base}
			defer s2.Close()
			before = countClones(t, logFile)
			if _, err := s2.Get(t.Context(), "django/django"); err != nil {
				t.Fatal(err)
			}
			if got := countClones(t, logFile) - before; got != 0 {
				t.Errorf("second store cloned %d times, want 0", got)
			}
		})
	}
}

func TestStoreFindsExistingLayouts(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, filepath.Join(dir, "owner", "plain"))
	git(t, "", "clone", "-q", "--bare", f.dir, filepath.Join(dir, "owner", "bare.git"))
	git(t, "", "clone", "-q", "--mirror", f.dir, filepath.Join(dir, "owner__flat"))
	logFile := fakeGit(t)
	s := &Store{Dir: dir, BaseURL: filepath.Join(t.TempDir(), "nowhere")}
	defer s.Close()
	for _, name := range []string{"owner/plain", "owner/bare", "owner/flat"} {
		r, err := s.Get(t.Context(), name)
		if err != nil {
			t.Errorf("Get(%s): %v", name, err)
			continue
		}
		if got, err := r.ReadFile(t.Context(), "HEAD", "new.txt"); err != nil || string(got) != "new\n" {
			t.Errorf("Get(%s): ReadFile = %q, %v", name, got, err)
		}
	}
	if n := countClones(t, logFile); n != 0 {
		t.Errorf("%d clones, want 0", n)
	}
}

func TestStoreCloneFailureIsNotRemembered(t *testing.T) {
	src := t.TempDir()
	s := &Store{Dir: t.TempDir(), BaseURL: src}
	defer s.Close()
	_, err := s.Get(t.Context(), "owner/name")
	if err == nil {
		t.Fatal("Get of a repository that does not exist succeeded")
	}
	if !strings.HasPrefix(err.Error(), "repo: clone owner/name from "+src+"/owner/name: ") {
		t.Errorf("error %q does not say what and where", err)
	}
	if entries, _ := os.ReadDir(s.Dir); len(entries) != 0 {
		t.Errorf("failed clone left %v (an empty owner directory is left too)", entries)
	}
	newFixture(t, filepath.Join(src, "owner", "name"))
	r, err := s.Get(t.Context(), "owner/name")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile(t.Context(), "HEAD", "a.txt"); err != nil {
		t.Error(err)
	}
}

// TestStoreNoClone: a Store that does not clone names the missing
// repository and where it looked, and makes no directory.
func TestStoreNoClone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repos")
	s := &Store{Dir: dir, NoClone: true}
	defer s.Close()
	_, err := s.Get(t.Context(), "owner/name")
	if !errors.Is(err, ErrNotInStore) || !strings.Contains(err.Error(), "owner/name") ||
		!strings.Contains(err.Error(), filepath.Join(dir, "owner", "name")) {
		t.Errorf("err = %v, want ErrNotInStore naming owner/name and %s", err, filepath.Join(dir, "owner", "name"))
	}
	if exists(dir) {
		t.Errorf("Get made %s", dir)
	}
	newFixture(t, filepath.Join(dir, "owner", "name"))
	if _, err := s.Get(t.Context(), "owner/name"); err != nil {
		t.Errorf("Get of a repository in the store: %v", err)
	}
}

func TestStoreBadNames(t *testing.T) {
	s := &Store{Dir: t.TempDir(), BaseURL: t.TempDir()}
	defer s.Close()
	for _, name := range []string{"", "django", "a/b/c", "../x", "x/..", "-x/y", "x/-y", "a b/c", "/x", "x/"} {
		if _, err := s.Get(t.Context(), name); err == nil {
			t.Errorf("Get(%q) succeeded", name)
		}
	}
}

func TestStoreCanceledGet(t *testing.T) {
	src := t.TempDir()
	newFixture(t, filepath.Join(src, "o", "n"))
	s := &Store{Dir: t.TempDir(), BaseURL: src}
	defer s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Get(ctx, "o/n"); err == nil {
		// The open may win the race with the canceled context; both
		// outcomes are fine, but a later Get must work.
		t.Log("Get with a canceled context succeeded")
	}
	if _, err := s.Get(t.Context(), "o/n"); err != nil {
		t.Fatal(err)
	}
}

func TestStoreClosed(t *testing.T) {
	src := t.TempDir()
	f := newFixture(t, filepath.Join(src, "o", "n"))
	s := &Store{Dir: t.TempDir(), BaseURL: src}
	r, err := s.Get(t.Context(), "o/n")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "o/n"); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
	if _, err := r.ReadFile(t.Context(), f.c1, "a.txt"); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadFile after the store's Close = %v, want ErrClosed", err)
	}
}
