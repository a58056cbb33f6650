package codesearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/lsp"
	"github.com/patchbench/patchbench/repo"
)

// Modes of the definition and references tools (the --lsp-tools flag of
// loc and mcp): off, on (the language server must be there), or auto
// (when the server for the files' language is on PATH).
const (
	LSPOff  = "false"
	LSPOn   = "true"
	LSPAuto = "auto"
)

// LSPServer is a language server the definition and references tools can
// use.
type LSPServer struct {
	// Language is the language's name, LanguageID its LSP identifier.
	Language, LanguageID string
	// Extensions are the file extensions of the language.
	Extensions []string
	// Command starts the server speaking LSP on stdio; Env adds to its
	// environment.
	Command []string
	Env     []string
}

// LSPServers are the servers known: gopls for Go (from the Go module
// proxy: go install golang.org/x/tools/gopls), pyright for Python (npm
// install -g pyright).
var LSPServers = []LSPServer{
	{Language: "go", LanguageID: "go", Extensions: []string{".go"}, Command: []string{"gopls"},
		// No module downloads and no toolchain switch: the tree is read as it is.
		Env: []string{"GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}},
	{Language: "python", LanguageID: "python", Extensions: []string{".py", ".pyi"}, Command: []string{"pyright-langserver", "--stdio"}},
}

// Language returns the server of the language most of the snapshot's
// files are written in, among those of LSPServers; false when none has any
// file.
func (s *Snapshot) Language(ctx context.Context) (LSPServer, bool, error) {
	files, err := s.src.listFiles(ctx)
	if err != nil {
		return LSPServer{}, false, err
	}
	best, bestN := -1, 0
	for i, srv := range LSPServers {
		n := 0
		for _, f := range files {
			for _, ext := range srv.Extensions {
				if strings.HasSuffix(f, ext) {
					n++
				}
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return LSPServer{}, false, nil
	}
	return LSPServers[best], true, nil
}

// lspSession is a running language server on a checked-out copy of the
// snapshot.
type lspSession struct {
	srv    LSPServer
	client *lsp.Client
	wt     *repo.Worktree // the checkout, for a commit snapshot
	tmp    string

	mu sync.Mutex
	// opened holds the files the server has open, with the text and
	// version last sent: a file changed on disk since (apply_patch of the
	// MCP server between two calls) is sent again, or the server would
	// answer from the old text.
	opened map[string]openDoc
	// disk holds the stamps of a directory's files as the server last
	// knew them (nil for a commit, which does not change).
	disk map[string]stamp
}

type openDoc struct {
	text    string
	version int
}

func (s *Snapshot) lspSession() *lspSession {
	s.lspMu.Lock()
	defer s.lspMu.Unlock()
	return s.lsp
}

// StartLSP starts the language server of the snapshot's language (see
// [Snapshot.Language]) when it is on PATH, and with it the definition and
// references tools. A language server needs files on disk: a commit is
// checked out into a temporary worktree, removed by [Snapshot.StopLSP]. It
// reports whether a server runs; with required, a missing server is an
// error instead.
func (s *Snapshot) StartLSP(ctx context.Context, required bool) (bool, error) {
	if s.lspSession() != nil {
		return true, nil
	}
	srv, ok, err := s.Language(ctx)
	if err != nil {
		return false, err
	}
	if !ok {
		if required {
			return false, fmt.Errorf("codesearch: no language server for the files of %s", s.name)
		}
		return false, nil
	}
	if _, err := exec.LookPath(srv.Command[0]); err != nil {
		if required {
			return false, fmt.Errorf("codesearch: %s language server %s is not installed: %w", srv.Language, srv.Command[0], err)
		}
		return false, nil
	}
	sess := &lspSession{srv: srv, opened: map[string]openDoc{}}
	dir := ""
	switch src := s.src.(type) {
	case *dirSource:
		dir = src.root.Dir()
		if sess.disk, err = src.stamps(ctx); err != nil {
			return false, fmt.Errorf("codesearch: language server: %w", err)
		}
	case *gitSource:
		if sess.tmp, err = os.MkdirTemp("", "codesearch-lsp-"); err != nil {
			return false, fmt.Errorf("codesearch: %w", err)
		}
		if sess.wt, err = src.r.AddWorktree(ctx, src.commit, filepath.Join(sess.tmp, "tree")); err != nil {
			os.RemoveAll(sess.tmp)
			return false, fmt.Errorf("codesearch: language server: %w", err)
		}
		dir = sess.wt.Dir
	}
	if sess.client, err = lsp.Start(ctx, dir, srv.Env, srv.Command...); err != nil {
		sess.cleanup(ctx)
		return false, fmt.Errorf("codesearch: %w", err)
	}
	s.lspMu.Lock()
	defer s.lspMu.Unlock()
	if s.lsp != nil { // started meanwhile by another call
		sess.stop(ctx)
		return true, nil
	}
	s.lsp = sess
	return true, nil
}

// StopLSP stops the language server and removes its checkout.
func (s *Snapshot) StopLSP(ctx context.Context) error {
	s.lspMu.Lock()
	sess := s.lsp
	s.lsp = nil
	s.lspMu.Unlock()
	if sess == nil {
		return nil
	}
	return sess.stop(ctx)
}

func (l *lspSession) stop(ctx context.Context) error {
	return errors.Join(l.client.Close(ctx), l.cleanup(ctx))
}

func (l *lspSession) cleanup(ctx context.Context) error {
	var err error
	if l.wt != nil {
		err = l.wt.Remove(context.WithoutCancel(ctx))
	}
	if l.tmp != "" {
		err = errors.Join(err, os.RemoveAll(l.tmp))
	}
	return err
}

func init() {
	params := json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"file path relative to the repository root"},` +
		`"line":{"type":"integer","minimum":1,"description":"1-based line where the symbol is written"},` +
		`"symbol":{"type":"string","description":"the identifier as written on that line, e.g. parse_expr"},` +
		`"occurrence":{"type":"integer","minimum":1,"description":"which occurrence of symbol on the line (default 1)"}},` +
		`"required":["path","line","symbol"],"additionalProperties":false}`)
	register(toolDef{Tool: Tool{
		Name: Definition,
		Description: "Go to the definition of a symbol, as an editor does, with the language server: give the file, the line " +
			"where the symbol is used and the symbol as written there. Prints path:line: text of each definition.",
		Parameters: params,
	}, lsp: true, run: func(ctx context.Context, s *Snapshot, raw json.RawMessage) (string, error) {
		return lspQuery(ctx, s, raw, false)
	}})
	register(toolDef{Tool: Tool{
		Name: References,
		Description: fmt.Sprintf("Find the uses of a symbol across the repository with the language server: give the "+
			"file, a line where the symbol is written (its definition or a use) and the symbol as written there. "+
			"Prints path:line: text of each reference, at most %d.", MaxGrepMatches),
		Parameters: params,
	}, lsp: true, run: func(ctx context.Context, s *Snapshot, raw json.RawMessage) (string, error) {
		return lspQuery(ctx, s, raw, true)
	}})
}

var identifier = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*$`)

func lspQuery(ctx context.Context, s *Snapshot, raw json.RawMessage, refs bool) (string, error) {
	var a struct {
		Path       string `json:"path"`
		Line       int    `json:"line"`
		Symbol     string `json:"symbol"`
		Occurrence int    `json:"occurrence"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return "", err
	}
	if a.Path == "" || a.Line < 1 || !identifier.MatchString(a.Symbol) || a.Occurrence < 0 {
		return "", fmt.Errorf("%w: want path, line (1-based) and symbol (one identifier)", ErrBadArguments)
	}
	sess := s.lspSession()
	data, err := s.ReadFile(ctx, a.Path)
	if err != nil {
		return "", err
	}
	clean := path.Clean(strings.TrimPrefix(a.Path, "./"))
	lines := strings.Split(string(data), "\n")
	if a.Line > len(lines) {
		return "", fmt.Errorf("%w: line %d is past the end of %s (%d lines)", ErrBadArguments, a.Line, clean, len(lines))
	}
	text := lines[a.Line-1]
	col, ok := wordAt(text, a.Symbol, max(a.Occurrence, 1))
	if !ok {
		return "", fmt.Errorf("%w: %q does not occur %d time(s) as a word on line %d of %s: %q", ErrBadArguments, a.Symbol, max(a.Occurrence, 1), a.Line, clean, clip(text))
	}
	abs := filepath.Join(sess.client.Root(), filepath.FromSlash(clean))
	sess.mu.Lock()
	err = sess.syncDisk(ctx, s)
	switch doc, ok := sess.opened[clean]; {
	case err != nil:
	case !ok:
		if err = sess.client.DidOpen(abs, sess.srv.LanguageID, string(data)); err == nil {
			sess.opened[clean] = openDoc{string(data), 1}
		}
	case doc.text != string(data):
		if err = sess.client.DidChange(abs, doc.version+1, string(data)); err == nil {
			sess.opened[clean] = openDoc{string(data), doc.version + 1}
		}
	}
	sess.mu.Unlock()
	if err != nil {
		return "", err
	}
	pos := lsp.Position{Line: a.Line - 1, Character: lsp.Column(text, col)}
	var locs []lsp.Location
	if refs {
		locs, err = sess.client.References(ctx, abs, pos, true)
	} else {
		locs, err = sess.client.Definition(ctx, abs, pos)
	}
	if err != nil {
		return "", err
	}
	what := "definitions"
	if refs {
		what = "references"
	}
	if len(locs) == 0 {
		return fmt.Sprintf("no %s of %s found", what, a.Symbol), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s of %s:\n", len(locs), what, a.Symbol)
	for i, l := range locs {
		if i == MaxGrepMatches {
			fmt.Fprintf(&b, "[cut at %d]\n", MaxGrepMatches)
			break
		}
		rel, err := filepath.Rel(sess.client.Root(), l.Path())
		if l.Path() == "" || err != nil || !filepath.IsLocal(rel) {
			// The standard library, installed packages: outside the
			// repository, so named but not read.
			fmt.Fprintf(&b, "(outside the repository) %s:%d\n", filepath.Base(l.Path()), l.Range.Start.Line+1)
			continue
		}
		rel = filepath.ToSlash(rel)
		line := ""
		if d, err := s.ReadFile(ctx, rel); err == nil {
			if ls := strings.Split(string(d), "\n"); l.Range.Start.Line < len(ls) {
				line = clip(strings.TrimSpace(ls[l.Range.Start.Line]))
			}
		}
		fmt.Fprintf(&b, "%s:%d: %s\n", rel, l.Range.Start.Line+1, line)
	}
	return b.String(), nil
}

// syncDisk tells the server what changed in the directory since it last
// looked: the new text of an open file (didChange), a watched-files event
// for the others. Language servers leave file watching to the client, so
// without this gopls answers from a file as it was before an apply_patch.
// The caller holds l.mu.
func (l *lspSession) syncDisk(ctx context.Context, s *Snapshot) error {
	d, ok := s.src.(*dirSource)
	if !ok || l.disk == nil {
		return nil
	}
	now, err := d.stamps(ctx)
	if err != nil {
		return fmt.Errorf("codesearch: language server: %w", err)
	}
	const created, changed, deleted = 1, 2, 3
	var events []map[string]any
	event := func(name string, kind int) {
		events = append(events, map[string]any{
			"uri": lsp.URI(filepath.Join(l.client.Root(), filepath.FromSlash(name))), "type": kind})
	}
	for name, st := range now {
		old, had := l.disk[name]
		switch {
		case !had:
			event(name, created)
		case old != st:
			if doc, open := l.opened[name]; open {
				data, err := d.readFile(ctx, name)
				if err != nil {
					return err
				}
				if string(data) != doc.text {
					abs := filepath.Join(l.client.Root(), filepath.FromSlash(name))
					if err := l.client.DidChange(abs, doc.version+1, string(data)); err != nil {
						return err
					}
					l.opened[name] = openDoc{string(data), doc.version + 1}
				}
				continue
			}
			event(name, changed)
		}
	}
	for name := range l.disk {
		if _, ok := now[name]; !ok {
			if _, open := l.opened[name]; open {
				if err := l.client.DidClose(filepath.Join(l.client.Root(), filepath.FromSlash(name))); err != nil {
					return err
				}
				delete(l.opened, name)
			}
			event(name, deleted)
		}
	}
	l.disk = now
	if len(events) == 0 {
		return nil
	}
	return l.client.Notify("workspace/didChangeWatchedFiles", map[string]any{"changes": events})
}

// wordAt returns the byte offset of the n-th occurrence of word in line
// standing as a whole identifier.
func wordAt(line, word string, n int) (int, bool) {
	isID := func(c byte) bool {
		return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for off := 0; ; {
		i := strings.Index(line[off:], word)
		if i < 0 {
			return 0, false
		}
		i += off
		end := i + len(word)
		if (i == 0 || !isID(line[i-1])) && (end == len(line) || !isID(line[end])) {
			if n--; n == 0 {
				return i, true
			}
		}
		off = end
	}
}
