package cache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/patchbench/patchbench/llm"
)

// embedSchema keeps vectors by the key of their text (see embedKey): a
// text embedded once, in any run, at any commit, is not sent again.
const embedSchema = `CREATE TABLE IF NOT EXISTS embeddings (
	key TEXT PRIMARY KEY,
	vec BLOB NOT NULL
)`

// embedKey is the key of text embedded by model at endpoint (llm.Endpoint;
// "" for the provider's own): hex SHA-256 of the three, so that the cache
// is addressed by content and two servers of one model name stay apart.
func embedKey(model, endpoint, text string) string {
	h := sha256.New()
	fmt.Fprintf(h, "embedding v1\x00%s\x00%s\x00", model, endpoint)
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

// WrapEmbedder returns an Embedder that answers from s the texts model
// embedded before at endpoint and sends the others to e, in one call,
// each distinct text once; it stores what e answers. A failed lookup is a
// miss and a failed store does not fail the call (both are counted in
// Stats, as for responses).
func WrapEmbedder(e llm.Embedder, s *Store, model, endpoint string) llm.Embedder {
	return llm.EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		keys := make([]string, len(texts))
		for i, t := range texts {
			keys[i] = embedKey(model, endpoint, t)
		}
		found, err := s.vectors(ctx, keys)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			s.noteErr(&s.readErrors, err)
		}
		out := make([][]float32, len(texts))
		var missing []string
		at := map[string]int{} // a missing key → its index in missing
		for i, k := range keys {
			if v, ok := found[k]; ok {
				out[i] = v
				s.hits.Add(1)
				continue
			}
			s.misses.Add(1)
			if _, ok := at[k]; !ok {
				at[k] = len(missing)
				missing = append(missing, texts[i])
			}
		}
		if len(missing) == 0 {
			return out, nil
		}
		vecs, err := e.Embed(ctx, missing)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(missing) {
			return nil, fmt.Errorf("embeddings for model %s: %d vectors for %d texts", model, len(vecs), len(missing))
		}
		add := map[string][]float32{}
		for i, k := range keys {
			if j, ok := at[k]; ok {
				out[i] = vecs[j]
				add[k] = vecs[j]
			}
		}
		if err := s.putVectors(ctx, add); err != nil {
			s.noteErr(&s.writeErrors, err)
		}
		return out, nil
	})
}

// vectors returns the stored vectors of keys, by key.
func (s *Store) vectors(ctx context.Context, keys []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	const batch = 500 // SQLite's bound on one statement's parameters is 32,766
	for start := 0; start < len(keys); start += batch {
		part := keys[start:min(len(keys), start+batch)]
		args := make([]any, len(part))
		for i, k := range part {
			args[i] = k
		}
		rows, err := s.db.QueryContext(ctx, `SELECT key, vec FROM embeddings WHERE key IN (?`+strings.Repeat(",?", len(part)-1)+`)`, args...)
		if err != nil {
			return out, fmt.Errorf("cache: read %s: %w", s.path, err)
		}
		for rows.Next() {
			var k string
			var b []byte
			if err := rows.Scan(&k, &b); err != nil {
				rows.Close()
				return out, fmt.Errorf("cache: read %s: %w", s.path, err)
			}
			if len(b) == 0 || len(b)%4 != 0 {
				continue // damaged: embedded again
			}
			v := make([]float32, len(b)/4)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			out[k] = v
		}
		if err := rows.Close(); err != nil {
			return out, fmt.Errorf("cache: read %s: %w", s.path, err)
		}
	}
	return out, nil
}

// putVectors stores vectors by key, in one transaction.
func (s *Store) putVectors(ctx context.Context, vecs map[string][]float32) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cache: write %s: %w", s.path, err)
	}
	for k, v := range vecs {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO embeddings (key, vec) VALUES (?, ?)`, k, b); err != nil {
			tx.Rollback()
			return fmt.Errorf("cache: write %s: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("cache: write %s: %w", s.path, err)
	}
	return nil
}
