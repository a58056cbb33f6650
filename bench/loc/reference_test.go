package loc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gittest.Run(t, dir, "", args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(out)
}

// makeRepo makes DIR/acme/calc with three commits touching Python and Go,
// one of them several functions and lines outside functions.
func makeRepo(t *testing.T) (reposDir, base string) {
	gittest.Need(t)
	reposDir = t.TempDir()
	dir := filepath.Join(reposDir, "acme", "calc")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q", "-b", "main")
	write("calc.py", "LIMIT = 10\n\n\nclass Calc:\n    def add(self, a, b):\n        return a + b\n\n    def div(self, a, b):\n        return a / b\n\n\ndef helper(x):\n    return x\n")
	write("clamp.go", "package calc\n\nfunc Clamp(x, lo, hi int) int {\n\treturn min(max(x, lo), hi)\n}\n\ntype T struct{}\n\nfunc (T) M() int {\n\treturn 1\n}\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "Initial")
	base = git(t, dir, "rev-parse", "HEAD")
	write("calc.py", "LIMIT = 20\n\n\nclass Calc:\n    def add(self, a, b):\n        return a + b + 0\n\n    def div(self, a, b):\n        if b == 0:\n            return None\n        return a / b\n\n\ndef helper(x):\n    return -x\n")
	git(t, dir, "commit", "-q", "-am", "Fix div by zero and helper sign")
	write("clamp.go", "package calc\n\nfunc Clamp(x, lo, hi int) int {\n\tif lo > hi {\n\t\tlo, hi = hi, lo\n\t}\n\treturn min(max(x, lo), hi)\n}\n\ntype T struct{}\n\nfunc (T) M() int {\n\treturn 2\n}\n")
	git(t, dir, "commit", "-q", "-am", "Add support for swapped bounds in Clamp")
	return reposDir, base
}

// TestReferenceScoresEveryMetric builds cases from a git history and from
// a SWE-bench-schema file, runs the reference model, and checks every
// metric of every row: each relace-mcp metric and every Acc@k and NDCG@k
// is 1; Recall@k, P@k and MAP@k are the best LocAgent's definitions allow
// (P@k = min(k, n)/k with n gold items, MAP@k likewise divided by k).
func TestReferenceScoresEveryMetric(t *testing.T) {
	reposDir, base := makeRepo(t)
	ctx := context.Background()
	store := repo.NewStore(reposDir)
	store.BaseURL = filepath.Join(reposDir, "nowhere")
	defer store.Close()
	rp, err := store.Get(ctx, "acme/calc")
	if err != nil {
		t.Fatal(err)
	}
	hist, problems, _, err := BuildFromHistory(ctx, rp, "acme/calc", "main", HistoryFilter{})
	if err != nil || len(problems) > 0 {
		t.Fatalf("history build: %v %v", err, problems)
	}
	if len(hist) != 2 {
		t.Fatalf("history build made %d cases, want 2", len(hist))
	}
	diff := git(t, filepath.Join(reposDir, "acme", "calc"), "diff", base, "main")
	row, _ := json.Marshal(map[string]string{"instance_id": "acme__calc-1", "repo": "acme/calc",
		"base_commit": base, "problem_statement": "div crashes", "patch": diff + "\n"})
	dataset := filepath.Join(t.TempDir(), "swe.jsonl")
	if err := os.WriteFile(dataset, append(row, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	swe, problems, err := BuildFromDataset(ctx, dataset, store)
	if err != nil || len(problems) > 0 || len(swe) != 1 {
		t.Fatalf("dataset build: %d cases, %v %v", len(swe), err, problems)
	}
	// The first commit touched 4 places in calc.py: LIMIT (outside
	// functions), Calc.add, Calc.div (an insertion after line 8 counts
	// line 8) and helper.
	ft := hist[0].GroundTruth.Files["calc.py"]
	if got := fmt.Sprint(ft.Functions, ft.Ranges); got != "[Calc.add Calc.div helper] [[1 1] [6 6] [8 8] [13 13]]" {
		t.Errorf("calc.py ground truth = %s", got)
	}
	cases := append(hist, swe...)
	if p := Validate(ctx, cases, store); len(p) > 0 {
		t.Fatalf("validate: %v", p)
	}
	out := t.TempDir()
	_, err = Run(ctx, RunOptions{Cases: cases, Repos: reposDir, CloneFrom: store.BaseURL, Out: out,
		Mode: ModeIndexed, Model: "reference", Runner: runner.Options{Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := runner.ReadRows(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	byID := map[string]Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	for _, r := range rows {
		c := byID[r["id"].(string)]
		ms := r["metrics"].(map[string]any)
		gold := map[string]int{"file": len(c.GroundTruth.Paths()), "module": len(c.GroundTruth.Modules()),
			"function": len(stripInit(c.GroundTruth.Functions()))}
		checked := 0
		for _, name := range MetricNames() {
			v, ok := ms[name].(float64)
			if !ok {
				t.Errorf("%s: metric %s missing", c.ID, name)
				continue
			}
			want := 1.0
			var level, metric string
			var k int
			if n, _ := fmt.Sscanf(strings.NewReplacer("_", " ", "@", " ").Replace(name), "%s %s %d", &level, &metric, &k); n == 3 {
				g := gold[level]
				switch metric {
				case "precision", "map":
					want = float64(min(k, g)) / float64(k)
				case "recall":
					want = float64(min(k, g)) / float64(min(g, 10))
				}
			}
			if !near(v, want) {
				t.Errorf("%s: %s = %.4f, want %.4f", c.ID, name, v, want)
			}
			checked++
		}
		if checked != 68 {
			t.Errorf("%s: %d metrics checked, want 68", c.ID, checked)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
