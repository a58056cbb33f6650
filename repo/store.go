package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultBaseURL is where a [Store] clones missing repositories from when its
// BaseURL is empty.
const DefaultBaseURL = "https://github.com"

// Store is a directory of repositories, the --repos DIR of the command line:
// DIR/OWNER/NAME is a git repository, bare or not. DIR/OWNER/NAME.git and
// DIR/OWNER__NAME are accepted too. A repository not found is cloned once
// with "git clone --mirror BaseURL/OWNER/NAME" into DIR/OWNER/NAME.
//
// A Store is safe for concurrent use; each repository is opened (or cloned)
// once and shared. Close the Store to close its repositories.
type Store struct {
	// Dir is the directory holding the repositories.
	Dir string
	// BaseURL is the URL (or local directory) that missing repositories
	// are cloned from, as BaseURL/OWNER/NAME. Empty means DefaultBaseURL.
	BaseURL string
	// NoClone makes a missing repository an error wrapping ErrNotInStore
	// instead of a clone: nothing reaches the network.
	NoClone bool

	mu     sync.Mutex
	repos  map[string]*storeEntry
	closed bool
}

// storeEntry is one repository: loaded, or being opened or cloned.
type storeEntry struct {
	done    chan struct{} // closed when repo or err is set
	repo    *Repo
	err     error
	waiters int                // callers waiting on done
	cancel  context.CancelFunc // stops the load
}

// NewStore returns a Store for the repositories under dir.
func NewStore(dir string) *Store {
	return &Store{Dir: dir}
}

// Get returns the repository named "owner/name", opening it, or cloning it
// if it is not in the store. Concurrent calls for one name share one open
// and one clone. A caller whose ctx ends stops waiting; the clone itself
// stops only when every caller waiting for it has gone. A failed clone is
// not remembered: a later Get tries again.
func (s *Store) Get(ctx context.Context, name string) (*Repo, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("repo: get %q: %w", name, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("repo: get %s: store %w", name, ErrClosed)
	}
	if s.repos == nil {
		s.repos = make(map[string]*storeEntry)
	}
	e := s.repos[name]
	if e == nil {
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		e = &storeEntry{done: make(chan struct{}), cancel: cancel}
		s.repos[name] = e
		go s.load(lctx, name, e)
	}
	e.waiters++
	s.mu.Unlock()

	select {
	case <-e.done:
		s.mu.Lock()
		e.waiters--
		s.mu.Unlock()
		if e.err != nil {
			return nil, e.err
		}
		return e.repo, nil
	case <-ctx.Done():
		s.mu.Lock()
		e.waiters--
		if e.waiters == 0 {
			select {
			case <-e.done:
			default:
				// Nobody wants it any more: stop the clone, and let
				// the next Get start afresh.
				e.cancel()
				if s.repos[name] == e {
					delete(s.repos, name)
				}
			}
		}
		s.mu.Unlock()
		return nil, fmt.Errorf("repo: get %s: %w", name, ctx.Err())
	}
}

// load opens or clones the repository for e.
func (s *Store) load(ctx context.Context, name string, e *storeEntry) {
	defer e.cancel()
	r, err := s.openOrClone(ctx, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.closed {
		r.Close()
		r, err = nil, fmt.Errorf("repo: get %s: store %w", name, ErrClosed)
	}
	e.repo, e.err = r, err
	if err != nil && s.repos[name] == e {
		delete(s.repos, name)
	}
	close(e.done)
}

// Path returns the directory that holds (or would hold, once cloned) the
// repository "owner/name".
func (s *Store) Path(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", fmt.Errorf("repo: path %q: %w", name, err)
	}
	for _, p := range s.candidates(name) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, nil
		}
	}
	return s.candidates(name)[0], nil
}

func (s *Store) candidates(name string) []string {
	owner, repo, _ := strings.Cut(name, "/")
	return []string{
		filepath.Join(s.Dir, owner, repo),
		filepath.Join(s.Dir, owner, repo+".git"),
		filepath.Join(s.Dir, owner+"__"+repo),
	}
}

func (s *Store) openOrClone(ctx context.Context, name string) (*Repo, error) {
	dir, err := s.Path(name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err == nil {
		return openAbs(ctx, dir, name)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("repo: open %s: %w", name, err)
	}
	if s.NoClone {
		return nil, fmt.Errorf("repo: %s: %w (looked for %s)", name, ErrNotInStore, strings.Join(s.candidates(name), ", "))
	}
	if err := s.clone(ctx, name, dir); err != nil {
		return nil, err
	}
	return openAbs(ctx, dir, name)
}

// ErrNotInStore is wrapped by the error of [Store.Get] for a repository
// missing from a Store that does not clone.
var ErrNotInStore = errors.New("not in the repositories directory")

func openAbs(ctx context.Context, dir, name string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("repo: open %s: %w", name, err)
	}
	return open(ctx, abs, name)
}

// clone clones name as a mirror into dir. It clones into a temporary
// directory next to dir and renames it, so an interrupted clone never looks
// like a repository, and a clone finished first by another process wins.
func (s *Store) clone(ctx context.Context, name, dir string) error {
	base := s.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	url := strings.TrimSuffix(base, "/") + "/" + name
	fail := func(err error) error {
		return fmt.Errorf("repo: clone %s from %s: %w", name, url, err)
	}
	parent := filepath.Dir(dir)
	// The directories MkdirAll makes, innermost first, to remove when the
	// clone fails.
	var made []string
	for d := parent; !exists(d) && d != filepath.Dir(d); d = filepath.Dir(d) {
		made = append(made, d)
	}
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return fail(err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".clone-")
	if err != nil {
		return fail(err)
	}
	defer removeAll(tmp)
	if _, err := gitOutput(ctx, "git", "", "clone", "--mirror", "--quiet", "--", url, tmp); err != nil {
		removeAll(tmp)
		// Leave no empty directory behind (a Remove fails, harmlessly,
		// where another clone has put something meanwhile).
		for _, d := range made {
			os.Remove(d)
		}
		return fail(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if exists(dir) {
			return nil // cloned meanwhile by someone else
		}
		return fail(err)
	}
	return nil
}

// Close closes every repository the store opened and stops clones in
// progress. Get fails afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for name, e := range s.repos {
		select {
		case <-e.done:
			if e.repo != nil {
				errs = append(errs, e.repo.Close())
			}
		default:
			e.cancel() // load closes the repository it gets
		}
		delete(s.repos, name)
	}
	return errors.Join(errs...)
}

// checkName accepts "owner/name" with GitHub's characters.
func checkName(name string) error {
	owner, repo, ok := strings.Cut(name, "/")
	if !ok || !validPart(owner) || !validPart(repo) {
		return errors.New(`want "owner/name"`)
	}
	return nil
}

func validPart(s string) bool {
	if s == "" || s == "." || s == ".." || strings.HasPrefix(s, "-") {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}
