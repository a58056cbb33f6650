package diffxyz

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/runner"
)

// devDataset returns the path of the shared dev dataset, skipping the test
// when it is not beside this checkout.
func devDataset(t testing.TB) string {
	t.Helper()
	return testdata.Path(t, "diffxyz-dev.jsonl.gz")
}

// TestReferenceDevSet is the pipeline check of the issue: the reference
// model, on every dev row × task × format × prompt, must score em = 1, and
// for diffgen parsed and applied (strictly too) with F1 = 1.
func TestReferenceDevSet(t *testing.T) {
	if testing.Short() {
		t.Skip("30 cases a dataset row")
	}
	path := devDataset(t)
	out := t.TempDir()
	sum, err := Run(context.Background(), Options{
		Dataset:      path,
		ModelOptions: runner.ModelOptions{Model: "reference"},
		Formats:      patch.Formats, // the paper's four and v4a
		Prompts:      PromptVariants,
		Out:          out,
		Runner:       runner.Options{Workers: 4 * runtime.NumCPU()},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := runner.ReadRows(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	dataset, err := testdata.ReadJSONL[testdata.Triple](path)
	if err != nil {
		t.Fatal(err)
	}
	// Every row × 3 tasks × 5 formats × 2 prompts (584 rows of the shared
	// corpus: 17,520 cases).
	if want := len(dataset) * 3 * 5 * 2; len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	bad := 0
	counts := map[string]int{}
	for _, r := range rows {
		task := r["task"].(string)
		counts[task]++
		ok := r["failed"] == false && r["em"] == 1.0 && r["iou"] == 1.0
		if task == string(DiffGen) {
			ok = ok && r["parsed"] == true && r["applied"] == true && r["applied_tolerant"] == true && r["em_tolerant"] == 1.0 &&
				r["f1_plus"] == 1.0 && r["f1_minus"] == 1.0
		}
		if !ok {
			bad++
			if bad <= 20 {
				t.Errorf("%s: em %v iou %v parsed %v applied %v tolerant %v f1+ %v f1- %v error %v %v",
					r["key"], r["em"], r["iou"], r["parsed"], r["applied"], r["applied_tolerant"], r["f1_plus"], r["f1_minus"], r["error"], r["apply_error"])
			}
		}
	}
	t.Logf("%d rows (%v), %d not perfect; run: done %d, failed %d in %v", len(rows), counts, bad, sum.Done, sum.Failed, sum.Elapsed)
}
