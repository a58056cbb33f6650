package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const replayRows = `{"id":"a","task":"apply","format":"udiff","response":"a-apply-udiff"}
{"id":"a","task":"apply","format":"udiff","prompt":"p2","response":"a-apply-udiff-p2"}

{"id":"a","task":"diffgen","format":"udiff","response":"a-diffgen"}
{"id":"b","response":"b-any"}
`

func TestReplayLookup(t *testing.T) {
	r, err := ReadReplay(strings.NewReader(replayRows), "rows.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		meta map[string]string
		want string
	}{
		{map[string]string{"id": "a", "task": "apply", "format": "udiff", "prompt": "p1"}, "a-apply-udiff"},
		{map[string]string{"id": "a", "task": "apply", "format": "udiff", "prompt": "p2"}, "a-apply-udiff-p2"},
		{map[string]string{"id": "a", "task": "apply", "format": "udiff"}, "a-apply-udiff"},
		{map[string]string{"id": "a", "task": "diffgen", "format": "udiff", "prompt": "p9"}, "a-diffgen"},
		{map[string]string{"id": "b", "task": "anything", "format": "v4a"}, "b-any"},
	}
	for _, tt := range tests {
		got, err := r.Lookup(tt.meta)
		if err != nil || got != tt.want {
			t.Errorf("Lookup(%v) = %q, %v; want %q", tt.meta, got, err, tt.want)
		}
	}
	for _, meta := range []map[string]string{
		{"id": "a", "task": "apply", "format": "search-replace"},
		{"id": "zzz"},
	} {
		_, err := r.Lookup(meta)
		if err == nil || !strings.Contains(err.Error(), "no row for id "+`"`+meta["id"]+`"`) || !strings.Contains(err.Error(), "rows.jsonl") {
			t.Errorf("Lookup(%v) error = %v, want one naming the id and the file", meta, err)
		}
	}
	if _, err := r.Lookup(nil); err == nil || !strings.Contains(err.Error(), "no id") {
		t.Errorf("Lookup(nil) error = %v", err)
	}
}

func TestReadReplayErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"id":"a","response":"x"}` + "\n" + `{"id":"a","response":"y"}`, "x.jsonl:2: duplicate of line 1"},
		{`{"response":"x"}`, "x.jsonl:1: row has no id"},
		{`{"id":`, "x.jsonl:1:"},
	}
	for _, tt := range tests {
		_, err := ReadReplay(strings.NewReader(tt.in), "x.jsonl")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadReplay(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestNewReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir with space", "r.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(replayRows), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := New(context.Background(), "replay/"+path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), Request{Model: "replay/" + path, Meta: map[string]string{"id": "b"}})
	if err != nil || resp.Text != "b-any" {
		t.Errorf("got %q, %v", resp.Text, err)
	}
	if Cacheable("replay/" + path) {
		t.Error("replay responses must not be cached")
	}
}

func TestSplitModel(t *testing.T) {
	for _, tt := range []struct{ in, p, m string }{
		{"openai/gpt-4o", "openai", "gpt-4o"},
		{"openai/meta-llama/llama-3-70b", "openai", "meta-llama/llama-3-70b"},
		{"replay//abs/path.jsonl", "replay", "/abs/path.jsonl"},
		{"reference", "reference", ""},
	} {
		if p, m := SplitModel(tt.in); p != tt.p || m != tt.m {
			t.Errorf("SplitModel(%q) = %q, %q", tt.in, p, m)
		}
	}
}
