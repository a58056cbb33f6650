package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/llm/cache"
	"github.com/patchbench/patchbench/llm/llmtest"
)

// An agent with one tool, against a fake server that plays a scripted
// conversation: the model asks for the time zone of a city, then answers.
// The second run is answered turn by turn from the response cache.
func ExampleRunAgent() {
	srv := llmtest.NewServer(llmtest.Config{Script: []llmtest.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "time_zone", Arguments: `{"city":"Lyon"}`}}},
		{Results: []llm.ToolResult{{CallID: "call_1", Content: "Europe/Paris"}}, Text: "Lyon is in Europe/Paris."},
	}})
	defer srv.Close()

	dir, err := os.MkdirTemp("", "agent-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	req := llm.Request{
		Model: "openai/example-model",
		Tools: []llm.Tool{{
			Name:        "time_zone",
			Description: "The IANA time zone of a city.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		}},
		Messages: []llm.Message{{Role: "user", Content: "Which time zone is Lyon in?"}},
	}
	timeZone := func(ctx context.Context, call llm.ToolCall) (llm.ToolOutput, error) {
		var args struct{ City string }
		if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
			return llm.ToolOutput{Content: "bad arguments: " + err.Error(), IsError: true}, nil
		}
		zones := map[string]string{"Lyon": "Europe/Paris"}
		if z, ok := zones[args.City]; ok {
			return llm.ToolOutput{Content: z}, nil
		}
		return llm.ToolOutput{Content: "unknown city " + args.City, IsError: true}, nil
	}

	for run := 1; run <= 2; run++ {
		client, err := llm.New(context.Background(), req.Model, llm.Options{BaseURL: srv.OpenAIBaseURL()})
		if err != nil {
			log.Fatal(err)
		}
		store, err := cache.Open(context.Background(), filepath.Join(dir, "cache.db"))
		if err != nil {
			log.Fatal(err)
		}
		a, err := llm.RunAgent(context.Background(), cache.Wrap(client, store), req, timeZone, 10)
		store.Close()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("run %d: %q after %d turns (%d cached), %d tool call; server requests so far: %d\n",
			run, a.Text, a.Turns, a.CachedTurns, a.ToolCalls, srv.Requests())
	}
	// Output:
	// run 1: "Lyon is in Europe/Paris." after 2 turns (0 cached), 1 tool call; server requests so far: 2
	// run 2: "Lyon is in Europe/Paris." after 2 turns (2 cached), 1 tool call; server requests so far: 2
}
