package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// ReplayRow is one line of a replay file: the response a model gave for a
// case. Task, Format and Prompt may be empty; an empty field matches any
// value, so a row without a prompt serves every prompt variant.
type ReplayRow struct {
	ID       string `json:"id"`
	Task     string `json:"task,omitempty"`
	Format   string `json:"format,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	Response string `json:"response"`
}

// Replay is a Client that answers from recorded rows instead of a model.
// It looks a request up by Meta["id"], Meta["task"], Meta["format"] and
// Meta["prompt"]; among the rows that match, the one that names the most of
// task, format and prompt wins.
type Replay struct {
	path string
	byID map[string][]ReplayRow
}

// OpenReplay reads a JSONL replay file.
func OpenReplay(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	r, err := ReadReplay(f, path)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ReadReplay reads JSONL replay rows from r; name is used in messages.
// Blank lines are skipped. A row without an id, or two rows with the same
// id, task, format and prompt, are errors.
func ReadReplay(r io.Reader, name string) (*Replay, error) {
	rp := &Replay{path: name, byID: make(map[string][]ReplayRow)}
	type key struct{ id, task, format, prompt string }
	seen := make(map[key]int)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var row ReplayRow
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, fmt.Errorf("replay: %s:%d: %w", name, line, err)
		}
		if row.ID == "" {
			return nil, fmt.Errorf("replay: %s:%d: row has no id", name, line)
		}
		k := key{row.ID, row.Task, row.Format, row.Prompt}
		if prev, ok := seen[k]; ok {
			return nil, fmt.Errorf("replay: %s:%d: duplicate of line %d (id %q)", name, line, prev, row.ID)
		}
		seen[k] = line
		rp.byID[row.ID] = append(rp.byID[row.ID], row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", name, err)
	}
	return rp, nil
}

// Lookup returns the recorded response for the case meta describes.
func (r *Replay) Lookup(meta map[string]string) (string, error) {
	id := meta["id"]
	if id == "" {
		return "", fmt.Errorf("replay: %s: request has no id in its metadata", r.path)
	}
	best, bestScore := -1, -1
	rows := r.byID[id]
	for i, row := range rows {
		score, ok := 0, true
		for _, f := range [...]struct{ row, want string }{
			{row.Task, meta["task"]}, {row.Format, meta["format"]}, {row.Prompt, meta["prompt"]},
		} {
			switch {
			case f.row == "":
			case f.row == f.want:
				score++
			default:
				ok = false
			}
		}
		if ok && score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return "", fmt.Errorf("replay: %s: no row for id %q (task %q, format %q, prompt %q)",
			r.path, id, meta["task"], meta["format"], meta["prompt"])
	}
	return rows[best].Response, nil
}

// Complete answers req from the recorded rows.
func (r *Replay) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("replay: %w", err)
	}
	text, err := r.Lookup(req.Meta)
	if err != nil {
		return Response{}, err
	}
	return Response{Text: text, Offline: true}, nil
}

// Oracle computes the correct answer to a request; the engine that built
// the request supplies it.
type Oracle func(ctx context.Context, req Request) (string, error)

// reference is the Client behind the model name "reference".
type reference struct{ oracle Oracle }

// Complete returns the oracle's answer.
func (r reference) Complete(ctx context.Context, req Request) (Response, error) {
	text, err := r.oracle(ctx, req)
	if err != nil {
		return Response{}, fmt.Errorf("reference: %w", err)
	}
	return Response{Text: text, Offline: true}, nil
}
