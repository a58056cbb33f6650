// Package codesearch gives a code-search agent read-only tools over a
// snapshot of a repository: view_file, view_directory, grep_search and
// find_symbol, and with a language server (see [Snapshot.StartLSP])
// definition and references.
//
// A [Snapshot] is either a commit of a git repository, read through package
// repo (cat-file and ls-tree; nothing is checked out), or a directory,
// read through a [patch.Root] so that no read leaves it. Each tool has a
// name, a description a model can act on and a JSON schema of its
// arguments ([Snapshot.Tools]); [Snapshot.Call] runs one call. Every
// answer is bounded (lines, entries, matches) and says when it was cut.
//
// A path outside the repository — absolute, leaving it with "..", inside
// .git, or through a symbolic link — is refused before anything is read:
// the error wraps [ErrOutside]. Malformed arguments wrap
// [ErrBadArguments]. Both, like a missing file, are meant to be shown to
// the model, which can then try again.
package codesearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
)

// ErrOutside is wrapped by errors about a path that is not inside the
// repository: absolute, "..", .git, or a symbolic link on the way.
var ErrOutside = errors.New("path outside the repository")

// ErrBadArguments is wrapped by errors about a tool call's arguments.
var ErrBadArguments = errors.New("bad arguments")

// ErrUnknownTool is wrapped by the error of a call to a tool the snapshot
// does not have.
var ErrUnknownTool = errors.New("unknown tool")

// Tool names.
const (
	ViewFile      = "view_file"
	ViewDirectory = "view_directory"
	GrepSearch    = "grep_search"
	FindSymbol    = "find_symbol"
	Definition    = "definition"
	References    = "references"
)

// Limits of the tools' answers.
const (
	MaxViewLines   = 400    // lines of one view_file answer
	MaxViewBytes   = 40_000 // bytes of one view_file answer
	MaxLineLength  = 300    // characters shown of one line (view_file, grep_search)
	MaxDirEntries  = 250    // entries of one view_directory answer
	MaxDirDepth    = 6      // depth view_directory descends at most
	MaxGrepMatches = 50     // matches of one grep_search answer
	MaxSymbols     = 50     // symbols of one find_symbol answer
	// MaxFileBytes bounds a file read from a directory: view_file refuses
	// a longer one and grep_search passes it by (and says so), without
	// reading it, so that one huge file in the tree costs no memory.
	MaxFileBytes = 16 << 20
	// MaxPatternBytes and MaxPatternInsts bound a grep_search pattern:
	// its text, and the size of the compiled program, which a search
	// costs in proportion to (per byte searched), and which cannot be
	// stopped inside a line.
	MaxPatternBytes = 10_000
	MaxPatternInsts = 10_000
)

// Tool describes a tool to a model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments (an object schema).
	Parameters json.RawMessage
}

// Snapshot is a read-only view of a repository at one commit or of a
// directory. Its methods are safe for concurrent use. Close it when done.
type Snapshot struct {
	src  source
	name string // for messages

	lspMu sync.Mutex
	lsp   *lspSession
}

// OpenCommit opens the tree of commit rev of r. Closing the snapshot does
// not close r.
func OpenCommit(ctx context.Context, r *repo.Repo, rev string) (*Snapshot, error) {
	commit, err := r.ResolveCommit(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("codesearch: %w", err)
	}
	return &Snapshot{src: &gitSource{r: r, commit: commit}, name: r.Name() + "@" + commit}, nil
}

// OpenDir opens the directory dir; its .git directory is not shown.
func OpenDir(dir string) (*Snapshot, error) {
	root, err := patch.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("codesearch: %w", err)
	}
	return &Snapshot{src: &dirSource{root: root}, name: dir}, nil
}

// Close stops the language server, if any, and releases the snapshot.
func (s *Snapshot) Close() error {
	return errors.Join(s.StopLSP(context.Background()), s.src.close())
}

// Files returns the path of every file in the snapshot, sorted.
func (s *Snapshot) Files(ctx context.Context) ([]string, error) {
	return s.src.listFiles(ctx)
}

// ReadFile reads a file after the same checks as view_file.
func (s *Snapshot) ReadFile(ctx context.Context, name string) ([]byte, error) {
	clean, err := checkName(ctx, s.src, name)
	if err != nil {
		return nil, err
	}
	if clean == "" {
		return nil, fmt.Errorf("%w: %q is the repository's root, not a file", ErrBadArguments, name)
	}
	return s.src.readFile(ctx, clean)
}

// Call runs the tool name with the JSON arguments args and returns its
// answer for the model. An error is also for the model to read (see the
// package documentation), unless ctx has ended.
func (s *Snapshot) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	t, ok := tools[name]
	if !ok {
		return "", fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if t.lsp && s.lspSession() == nil {
		return "", fmt.Errorf("%w %q: no language server runs for this repository", ErrUnknownTool, name)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	out, err := t.run(ctx, s, args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// decodeArgs decodes a call's arguments strictly: unknown fields and
// missing required ones are errors the model is told about.
func decodeArgs(args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytesReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadArguments, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the JSON object", ErrBadArguments)
	}
	return nil
}
