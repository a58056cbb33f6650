// Package cache keeps model responses in a SQLite file so that a rerun of
// the same requests sends none of them again.
//
// A response is keyed by the SHA-256 of a canonical JSON document holding
// the provider, the model, the sampling parameters (temperature, max tokens,
// seed), the sample index (Request.Sample: n samples of one prompt are n
// entries), the system prompt, the tools offered and the messages with their
// tool calls and results; Request.Meta is not part of the key. Each turn of
// a tool-calling conversation is its own request keyed by the whole history
// before it, so a rerun of an agent that makes the same calls is answered
// turn by turn from the cache. A stored response keeps its tool calls and
// stop reason. Only successful responses are stored. The database uses WAL mode
// and a busy timeout, serializes its writes, and serves many concurrent
// readers.
package cache

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/patchbench/patchbench/llm"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// keyVersion changes when the key document changes, so that old entries
// are never served for a different request shape.
const keyVersion = 1

type keyDoc struct {
	V           int      `json:"v"`
	Provider    string   `json:"provider"`
	Model       string   `json:"model"`
	Temperature *float64 `json:"temperature"`
	MaxTokens   int      `json:"max_tokens"`
	Seed        *int64   `json:"seed"`
	// ThinkingBudget is left out when 0, so that requests without
	// extended thinking keep their keys.
	ThinkingBudget int           `json:"thinking_budget,omitempty"`
	System         string        `json:"system"`
	Messages       []llm.Message `json:"messages"`
	// Tools is left out when empty, so that requests without tools keep
	// the keys they had before tools existed.
	Tools []llm.Tool `json:"tools,omitempty"`
	// Sample is left out when empty, for the same reason: a request made
	// once keeps its key; the n samples of a prompt get n keys.
	Sample string `json:"sample,omitempty"`
	// Endpoint is the server the request went to, left out for the
	// provider's own (llm.Endpoint), so that keys made before it existed
	// stay valid there; two servers that serve a model of one name (a
	// proxy, a local server, another vendor) get keys of their own.
	Endpoint string `json:"endpoint,omitempty"`
}

func canonical(req llm.Request, endpoint string) []byte {
	p, m := llm.SplitModel(req.Model)
	d := keyDoc{
		V: keyVersion, Provider: p, Model: m,
		Temperature: req.Temperature, MaxTokens: req.MaxTokens, Seed: req.Seed, ThinkingBudget: req.ThinkingBudget,
		System: req.System, Messages: req.Messages, Tools: req.Tools, Sample: req.Sample,
		Endpoint: endpoint,
	}
	if d.Messages == nil {
		d.Messages = []llm.Message{}
	}
	b, err := json.Marshal(d)
	if err != nil {
		// Only NaN or infinite temperatures fail; give them their own key.
		b = fmt.Appendf(nil, "%#v", d)
	}
	return b
}

// Key returns the cache key of req sent to its provider's own endpoint:
// hex SHA-256 of its canonical JSON.
func Key(req llm.Request) string { return KeyAt(req, "") }

// KeyAt returns the cache key of req sent to endpoint (as llm.Endpoint
// gives it; "" for the provider's own).
func KeyAt(req llm.Request, endpoint string) string { return keyOf(canonical(req, endpoint)) }

// keyOf is the key of a canonical request document.
func keyOf(doc []byte) string {
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:])
}

// Store is a response cache in one SQLite file. It is safe for concurrent
// use, also by several processes sharing the file.
type Store struct {
	db   *sql.DB
	path string
	wmu  sync.Mutex // serializes writers within the process

	hits, misses, writeErrors, readErrors atomic.Int64
	lastErr                               atomic.Pointer[error]
}

// Stats count what a Store did since it was opened.
type Stats struct {
	Hits, Misses int64
	// ReadErrors and WriteErrors count failed lookups and stores; a failed
	// lookup is treated as a miss and a failed store does not fail the call.
	ReadErrors, WriteErrors int64
	// LastError is the latest of those errors, nil if none.
	LastError error
}

const schema = `CREATE TABLE IF NOT EXISTS responses (
	key           TEXT PRIMARY KEY,
	model         TEXT NOT NULL,
	request       TEXT NOT NULL,
	text          TEXT NOT NULL,
	input_tokens  INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	cost          REAL NOT NULL,
	latency_ms    INTEGER NOT NULL,
	created_at    TEXT NOT NULL,
	tool_calls    TEXT NOT NULL DEFAULT '',
	stop_reason   TEXT NOT NULL DEFAULT ''
)`

// addedColumns are the columns added to the table after its first
// version; Open adds those an older cache file lacks.
var addedColumns = []struct{ name, def string }{
	{"tool_calls", "TEXT NOT NULL DEFAULT ''"},
	{"stop_reason", "TEXT NOT NULL DEFAULT ''"},
}

// Open opens or creates the cache file at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("cache: empty path")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("cache: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	db.SetMaxIdleConns(max(4, runtime.GOMAXPROCS(0)))
	db.SetConnMaxIdleTime(0)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache: create table in %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, embedSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache: create table in %s: %w", path, err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache: upgrade table in %s: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// migrate adds the columns an older cache file lacks. Another process may
// add them at the same time; a duplicate column is then no error.
func migrate(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info('responses')`)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		have[name] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, c := range addedColumns {
		if have[c.name] {
			continue
		}
		_, err := db.ExecContext(ctx, `ALTER TABLE responses ADD COLUMN `+c.name+` `+c.def)
		if err != nil && !strings.Contains(err.Error(), "duplicate column") {
			return err
		}
	}
	return nil
}

// Merge copies into the store every response of the cache file at path
// whose key the store lacks (merging the caches of a run's shards), and
// reports how many it added and how many keys both held with a different
// answer (the store's is kept).
func (s *Store) Merge(ctx context.Context, path string) (added, differing int, err error) {
	other, err := Open(ctx, path) // brings an older file's table up to date
	if err != nil {
		return 0, 0, err
	}
	if err := other.Close(); err != nil {
		return 0, 0, err
	}
	conn, err := s.db.Conn(ctx) // ATTACH holds for one connection
	if err != nil {
		return 0, 0, fmt.Errorf("cache: merge %s: %w", path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS other`, path); err != nil {
		return 0, 0, fmt.Errorf("cache: merge %s: %w", path, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE other`)
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM other.responses o JOIN main.responses m ON m.key = o.key
		WHERE m.text != o.text OR m.tool_calls != o.tool_calls`).Scan(&differing); err != nil {
		return 0, 0, fmt.Errorf("cache: merge %s: %w", path, err)
	}
	res, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO main.responses
		(key, model, request, text, input_tokens, output_tokens, cost, latency_ms, created_at, tool_calls, stop_reason)
		SELECT key, model, request, text, input_tokens, output_tokens, cost, latency_ms, created_at, tool_calls, stop_reason
		FROM other.responses`)
	if err != nil {
		return 0, 0, fmt.Errorf("cache: merge %s: %w", path, err)
	}
	n, _ := res.RowsAffected()
	return int(n), differing, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("cache: close %s: %w", s.path, err)
	}
	return nil
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	st := Stats{
		Hits: s.hits.Load(), Misses: s.misses.Load(),
		ReadErrors: s.readErrors.Load(), WriteErrors: s.writeErrors.Load(),
	}
	if e := s.lastErr.Load(); e != nil {
		st.LastError = *e
	}
	return st
}

// Get returns the stored response for key; ok is false when there is none.
func (s *Store) Get(ctx context.Context, key string) (resp llm.Response, ok bool, err error) {
	var latencyMS int64
	var calls string
	err = s.db.QueryRowContext(ctx,
		`SELECT text, input_tokens, output_tokens, cost, latency_ms, tool_calls, stop_reason FROM responses WHERE key = ?`, key,
	).Scan(&resp.Text, &resp.InputTokens, &resp.OutputTokens, &resp.Cost, &latencyMS, &calls, &resp.StopReason)
	if errors.Is(err, sql.ErrNoRows) {
		return llm.Response{}, false, nil
	}
	if err != nil {
		return llm.Response{}, false, fmt.Errorf("cache: read %s: %w", s.path, err)
	}
	if calls != "" {
		if err := json.Unmarshal([]byte(calls), &resp.ToolCalls); err != nil {
			return llm.Response{}, false, fmt.Errorf("cache: read %s: tool calls of %s: %w", s.path, key, err)
		}
	}
	resp.Latency = time.Duration(latencyMS) * time.Millisecond
	return resp, true, nil
}

// Put stores resp as the answer to req under Key(req).
func (s *Store) Put(ctx context.Context, req llm.Request, resp llm.Response) error {
	doc := canonical(req, "")
	return s.put(ctx, keyOf(doc), doc, req, resp)
}

// put stores resp under key, the key of doc, req's canonical document.
func (s *Store) put(ctx context.Context, key string, doc []byte, req llm.Request, resp llm.Response) error {
	var calls []byte
	if len(resp.ToolCalls) > 0 {
		var err error
		if calls, err = json.Marshal(resp.ToolCalls); err != nil {
			return fmt.Errorf("cache: write %s: tool calls: %w", s.path, err)
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx,
		`INSERT OR REPLACE INTO responses
		 (key, model, request, text, input_tokens, output_tokens, cost, latency_ms, created_at, tool_calls, stop_reason)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		key, req.Model, string(doc), resp.Text, resp.InputTokens, resp.OutputTokens,
		resp.Cost, resp.Latency.Milliseconds(), time.Now().UTC().Format(time.RFC3339), string(calls), resp.StopReason)
	if err != nil {
		return fmt.Errorf("cache: write %s: %w", s.path, err)
	}
	return nil
}

func (s *Store) noteErr(n *atomic.Int64, err error) {
	n.Add(1)
	s.lastErr.Store(&err)
}

// Wrap returns a Client that answers from s when it can and otherwise asks
// c and stores the answer. A response served from s has Cached set and
// costs no request. Requests for models that llm.Cacheable rejects (replay,
// reference) pass straight to c. c sends to its provider's own endpoint;
// see WrapAt.
func Wrap(c llm.Client, s *Store) llm.Client { return WrapAt(c, s, "") }

// WrapAt is Wrap for a client that sends to endpoint (llm.Endpoint), whose
// answers are kept apart from other endpoints'.
func WrapAt(c llm.Client, s *Store, endpoint string) llm.Client {
	return llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if !llm.Cacheable(req.Model) {
			return c.Complete(ctx, req)
		}
		start := time.Now()
		doc := canonical(req, endpoint)
		key := keyOf(doc)
		resp, ok, err := s.Get(ctx, key)
		if err != nil {
			if ctx.Err() != nil {
				return llm.Response{}, err
			}
			s.noteErr(&s.readErrors, err)
		}
		if ok {
			s.hits.Add(1)
			resp.Cached = true
			resp.Latency = time.Since(start)
			return resp, nil
		}
		s.misses.Add(1)
		resp, err = c.Complete(ctx, req)
		if err != nil {
			return resp, err
		}
		// The answer is paid for: store it even if ctx ends now.
		if err := s.put(context.WithoutCancel(ctx), key, doc, req, resp); err != nil {
			s.noteErr(&s.writeErrors, err)
		}
		return resp, nil
	})
}
