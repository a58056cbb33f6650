package runner_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/patchbench/patchbench/runner"
)

// score is the row a benchmark writes for one case.
type score struct {
	Task   string `json:"task"`
	EM     bool   `json:"em"`
	Tokens int64  `json:"tokens"`
}

func (s score) Usage() runner.Usage { return runner.Usage{Tokens: s.Tokens} }

func Example() {
	dir, err := os.MkdirTemp("", "runner-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "results.jsonl")

	cases := []runner.Case{
		{ID: "django-1", Key: "django-1|apply", Data: "expected"},
		{ID: "flask-7", Key: "flask-7|apply", Data: "expected"},
	}
	// The function does the work of one case: here a stand-in for asking a
	// model and scoring its answer.
	fn := func(ctx context.Context, c runner.Case) (runner.Result, error) {
		answer := "expected"
		if c.ID == "flask-7" {
			answer = "something else"
		}
		return score{Task: "apply", EM: answer == c.Data, Tokens: 100}, nil
	}
	s, err := runner.Run(context.Background(), cases, fn, runner.Options{Out: out})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("done %d, failed %d, tokens %d\n", s.Done, s.Failed, s.Tokens)

	rows, err := runner.ReadRows(out)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Println(r["key"], r["task"], r["em"], r["failed"])
	}

	// Running again with Resume finds nothing left to do.
	s, _ = runner.Run(context.Background(), cases, fn, runner.Options{Out: out, Resume: true})
	fmt.Printf("skipped %d, done %d\n", s.Skipped, s.Done)
	// Output:
	// done 2, failed 0, tokens 200
	// django-1|apply apply true false
	// flask-7|apply apply false false
	// skipped 2, done 0
}
