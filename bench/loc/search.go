package loc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

// Reference answers with the ground truth itself: a check of the pipeline
// (every relace-mcp metric, Acc@k and NDCG@k score 1).
type Reference struct{}

// Search implements [Searcher].
func (Reference) Search(_ context.Context, c Case, _ *repo.Repo, _ *runner.ModelCalls) (Answer, error) {
	f := Found{Files: c.GroundTruth.Paths(), Modules: c.GroundTruth.Modules(),
		Functions: c.GroundTruth.Functions(), Ranges: map[string][]Range{}}
	for p, ft := range c.GroundTruth.Files {
		f.Ranges[p] = append([]Range(nil), ft.Ranges...)
	}
	return Answer{Found: f}, nil
}

// Replay answers with recorded answers, read as the peers write them:
// LocAgent's loc_outputs.jsonl (instance_id, found_files, found_modules,
// found_entities: lists, or strings holding Python lists, or a list of
// such lists of which the first counts) and relace-mcp style rows
// ({"id", "files": {path: [[start, end], ...]}}).
type Replay struct {
	answers map[string]Found
}

// LoadReplay reads a file of recorded answers.
func LoadReplay(path string) (*Replay, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r := &Replay{answers: map[string]Found{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row map[string]json.RawMessage
		if err := json.Unmarshal(line, &row); err != nil {
			return nil, fmt.Errorf("replay %s: line %d: %w", path, n, err)
		}
		id, f, err := replayRow(row)
		if err != nil {
			return nil, fmt.Errorf("replay %s: line %d: %w", path, n, err)
		}
		r.answers[id] = f
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	return r, nil
}

func replayRow(row map[string]json.RawMessage) (string, Found, error) {
	var id string
	for _, k := range []string{"instance_id", "id"} {
		if raw, ok := row[k]; ok {
			if err := json.Unmarshal(raw, &id); err != nil {
				return "", Found{}, fmt.Errorf("%s: %w", k, err)
			}
			break
		}
	}
	if id == "" {
		return "", Found{}, errors.New("row without instance_id or id")
	}
	var f Found
	var err error
	for key, dst := range map[string]*[]string{"found_files": &f.Files, "found_modules": &f.Modules, "found_entities": &f.Functions} {
		if raw, ok := row[key]; ok {
			if *dst, err = rankedList(raw); err != nil {
				return "", Found{}, fmt.Errorf("%s %s: %w", id, key, err)
			}
		}
	}
	if raw, ok := row["files"]; ok {
		var files map[string][]Range
		if err := json.Unmarshal(raw, &files); err != nil {
			return "", Found{}, fmt.Errorf("%s files: %w", id, err)
		}
		f.Ranges = files
		if f.Files == nil {
			f.Files = sortedKeys(files)
		}
	}
	return id, f, nil
}

// rankedList decodes a LocAgent list: a JSON list of strings, a list whose
// first element is such a list, or a string holding a Python list.
func rankedList(raw json.RawMessage) ([]string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return PythonList(x)
	case []any:
		if len(x) > 0 {
			if inner, ok := x[0].([]any); ok {
				x = inner
			}
		}
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("list item %v is not a string", e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a list: %s", raw)
}

// PythonList parses the repr of a Python list of strings, as LocAgent's
// outputs and Loc-Bench's edit_functions hold them: ['a.py:f', "b.py:C.m"].
func PythonList(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("not a Python list: %.40q", s)
	}
	s = s[1 : len(s)-1]
	var out []string
	for {
		s = strings.TrimLeft(s, " \t\n,")
		if s == "" {
			return out, nil
		}
		q := s[0]
		if q != '\'' && q != '"' {
			return nil, fmt.Errorf("not a string in a Python list: %.40q", s)
		}
		var b strings.Builder
		i := 1
		for ; i < len(s) && s[i] != q; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, errors.New("unterminated string in a Python list")
		}
		out = append(out, b.String())
		s = s[i+1:]
	}
}

// Search implements [Searcher]. A case without a recorded answer is an
// empty answer, scored as such (LocAgent scores missing instances so).
func (r *Replay) Search(_ context.Context, c Case, _ *repo.Repo, _ *runner.ModelCalls) (Answer, error) {
	return Answer{Found: r.answers[c.ID]}, nil
}
