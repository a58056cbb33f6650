package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/patchbench/patchbench/internal/atomicfile"
)

// PlanFile is the file of a run directory in which [Run] records, before
// the first case, how many cases the run selected (after shuffle, limit
// and shard): a run whose results file holds fewer keys has not finished
// (killed, interrupted, stopped by fail-fast), and [Merge] refuses it.
const PlanFile = "plan.json"

// planInfo is the content of PlanFile.
type planInfo struct {
	// Selected is the number of cases of the run (Summary.Selected).
	Selected int `json:"selected"`
	// Shard is the shard they are of ("" for all).
	Shard string `json:"shard,omitempty"`
}

func writePlan(dir string, p planInfo) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("runner: %s: %w", PlanFile, err)
	}
	if err := atomicfile.Write(filepath.Join(dir, PlanFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return nil
}

// readPlan reads PlanFile of the run directory dir; ok is false for a run
// written before it was recorded.
func readPlan(dir string) (p planInfo, ok bool, err error) {
	b, err := readNoFollow(filepath.Join(dir, PlanFile))
	if errors.Is(err, fs.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("runner: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, false, fmt.Errorf("runner: %s: %w", filepath.Join(dir, PlanFile), err)
	}
	return p, true, nil
}
