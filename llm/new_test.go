package llm_test

import (
	"testing"

	"github.com/patchbench/patchbench/llm"
)

func TestEndpoint(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		model string
		opts  llm.Options
		want  string
	}{
		{"openai/m", llm.Options{Getenv: env(nil)}, ""},
		{"openai/m", llm.Options{BaseURL: "https://api.openai.com/v1/", Getenv: env(nil)}, ""},
		{"openai/m", llm.Options{BaseURL: "http://localhost:8000/v1/"}, "http://localhost:8000/v1"},
		{"openai/m", llm.Options{Getenv: env(map[string]string{"OPENAI_BASE_URL": "https://proxy.example/v1"})}, "https://proxy.example/v1"},
		{"openai/m", llm.Options{Getenv: env(map[string]string{"ANTHROPIC_BASE_URL": "https://proxy.example"})}, ""},
		{"anthropic/m", llm.Options{Getenv: env(map[string]string{"ANTHROPIC_BASE_URL": "https://proxy.example"})}, "https://proxy.example"},
		{"anthropic/m", llm.Options{BaseURL: "https://api.anthropic.com", Getenv: env(nil)}, ""},
		{"reference", llm.Options{BaseURL: "http://x"}, ""},
	} {
		if got := llm.Endpoint(c.model, c.opts); got != c.want {
			t.Errorf("Endpoint(%s, BaseURL %q) = %q, want %q", c.model, c.opts.BaseURL, got, c.want)
		}
	}
}
