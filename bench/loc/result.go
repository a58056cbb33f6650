package loc

import (
	"context"

	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

// Modes of loc run.
const (
	ModeIndexed = "indexed"
	ModeAgentic = "agentic"
)

// Answer is what a search returns for one case.
type Answer struct {
	Found Found
	// Turns is the number of model turns the search used (0 without a
	// model).
	Turns int
	// NoAnswer says why an agentic search answered nothing (the model
	// stopped, or reached the turn bound, without report_back); the case is
	// scored with nothing found.
	NoAnswer string
}

// Searcher answers cases. Implementations must be safe for concurrent use:
// the runner's workers share one. calls records the model calls of the
// case (nil for searches without a model).
type Searcher interface {
	Search(ctx context.Context, c Case, rp *repo.Repo, calls *runner.ModelCalls) (Answer, error)
}

// Result is one results.jsonl row of loc run (besides the runner's own
// fields key, id, failed, error, elapsed_ms).
type Result struct {
	Repo     string `json:"repo"`
	Category string `json:"category,omitempty"`
	Mode     string `json:"mode"`
	Model    string `json:"model,omitempty"`
	// Found is the ranked answer.
	Found Found `json:"found"`
	// Metrics are the scores of Found against the ground truth, named as
	// in package metrics (file_recall, quality_score, file_acc@5, ...).
	Metrics map[string]float64 `json:"metrics"`
	Turns   int                `json:"turns,omitempty"`
	// NoAnswer is [Answer.NoAnswer].
	NoAnswer string `json:"no_answer,omitempty"`
	// Unscored says why the case was not searched nor scored (it has no
	// ground truth); the row has no metrics and the report leaves it out
	// of every mean, naming it.
	Unscored string `json:"unscored,omitempty"`
	// SearchMS is the wall time of the search (for the indexed mode, the
	// index's build or load included): relace-mcp's latency_ms, whose
	// mean is report.json's avg_latency_ms.
	SearchMS int64 `json:"search_ms"`
	runner.ModelCalls
}

// Incomplete reports a case whose search ended without an answer
// (NoAnswer): relace-mcp's partial case, which its --fail-fast counts
// among the failures in a row and its avg_ means leave out.
func (r *Result) Incomplete() bool { return r.NoAnswer != "" }
