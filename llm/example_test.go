package llm_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/cache"
	"github.com/patchbench/patchbench/llm/llmtest"
)

// A full client stack: an OpenAI-compatible server, rate limits, retries
// (built in by New) and the response cache around them.
func Example() {
	srv := llmtest.NewServer(llmtest.Config{}) // stands in for OPENAI_BASE_URL
	defer srv.Close()
	dir, err := os.MkdirTemp("", "llm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	model := "openai/gpt-4o-mini"
	c, err := llm.New(ctx, model, llm.Options{
		BaseURL: srv.OpenAIBaseURL(),
		APIKey:  "sk-example", // normally from OPENAI_API_KEY or .env
		Limits:  llm.Limits{RequestsPerMinute: 500, TokensPerMinute: 200_000},
	})
	if err != nil {
		log.Fatal(err)
	}
	store, err := cache.Open(ctx, filepath.Join(dir, "cache.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	c = cache.Wrap(c, store)

	temp := 0.0
	req := llm.Request{
		Model:       model,
		System:      "Answer briefly.",
		Messages:    []llm.Message{{Role: "user", Content: "hello"}},
		Temperature: &temp,
		MaxTokens:   256,
	}
	for range 2 {
		resp, err := c.Complete(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%q cached=%v\n", resp.Text, resp.Cached)
	}
	fmt.Println("requests sent:", srv.Requests())
	// Output:
	// "echo: hello" cached=false
	// "echo: hello" cached=true
	// requests sent: 1
}
