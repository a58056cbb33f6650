// Command locfit fits the indexed search's fusion weights on a cases file
// (the tuning part of scripts/loc-split.sh): it reads what each signal
// says about every case once, then tries every fusion of a grid of
// per-list weights and RRF constants (codesearch.FitFusion) for the best
// mean file Acc@k, ties going to the simpler fusion; then, that file
// ranking kept, the functions' own constant and the weight of their
// file's score (codesearch.FitFuncs) for the best function Acc@10. It
// prints the best fusion as Go, the equal-weight fusion's score beside
// it, and each list's weight swept with the others at the best.
//
//	go run ./scripts/locfit -cases tuning.jsonl -repos REPOS -index-cache DIR
//	go run ./scripts/locfit -eval -cases heldout.jsonl -repos REPOS -index-cache DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/codesearch"
	"github.com/patchbench/patchbench/repo"
)

func main() {
	cases := flag.String("cases", "", "the cases `FILE` (loc build's output)")
	repos := flag.String("repos", "", "the repositories `DIR`, as loc run --repos")
	cache := flag.String("index-cache", "", "the index cache `DIR`, as loc run --index-cache")
	signals := flag.String("signals", "default,calls,imports,files", "the signals whose lists are fitted (codesearch.ParseSignals)")
	weights := flag.String("weights", "0,0.25,0.5,1,2,4", "the weights tried for each list but BM25's")
	ks := flag.String("k", "10,30,60,120", "the RRF constants tried")
	at := flag.Int("at", 5, "the objective: file Acc@`K`")
	eval := flag.Bool("eval", false, "fit nothing: print file Acc@K with equal weights and with codesearch.DefaultFusion (for a part the weights must not be fitted on)")
	flag.Parse()
	if err := run(*cases, *repos, *cache, *signals, *weights, *ks, *at, *eval); err != nil {
		fmt.Fprintln(os.Stderr, "locfit:", err)
		os.Exit(1)
	}
}

func run(casesFile, repos, cache, signals, weights, ks string, at int, eval bool) error {
	ctx := context.Background()
	cs, err := loc.ReadCases(casesFile)
	if err != nil {
		return err
	}
	on, err := codesearch.ParseSignals(signals)
	if err != nil {
		return err
	}
	g := codesearch.FitGrid{At: at}
	if g.Weights, err = floats(weights); err != nil {
		return fmt.Errorf("-weights: %w", err)
	}
	if g.Ks, err = floats(ks); err != nil {
		return fmt.Errorf("-k: %w", err)
	}
	store := repo.NewStore(repos)
	store.NoClone = true
	defer store.Close()
	s := loc.NewIndexed(cache)
	s.Signals = on
	// fit holds the cases with a file-level ground truth, LocAgent's (the
	// files holding a ground-truth function), as loc run scores file_acc@k;
	// ev holds every case's evidence for the functions' objective.
	var fit []codesearch.FitCase
	var ev []*codesearch.Evidence
	for _, c := range cs {
		rp, err := store.Get(ctx, c.Repo)
		if err != nil {
			return fmt.Errorf("%s: %w", c.ID, err)
		}
		e, err := s.Evidence(ctx, rp, c.BaseCommit, c.Query)
		if err != nil {
			return fmt.Errorf("%s: %w", c.ID, err)
		}
		for _, l := range e.Lists {
			if l.Name != codesearch.ListBM25 && !slices.Contains(g.Lists, l.Name) {
				g.Lists = append(g.Lists, l.Name)
			}
		}
		ev = append(ev, e)
		if gold := c.GroundTruth.FunctionPaths(); len(gold) > 0 {
			fit = append(fit, codesearch.FitCase{Evidence: e, Gold: gold})
		}
	}
	slices.Sort(g.Lists)
	// funcAcc is the mean function Acc@10 of f over the cases with
	// ground-truth functions, scored as loc run scores its answers.
	funcAcc := func(f codesearch.Fusion) float64 {
		sum, n := 0.0, 0
		for i, c := range cs {
			m := loc.Score(c.GroundTruth, loc.Complete(s.Found(ev[i].Fuse(f))))
			if v, ok := m["function_acc@10"]; ok {
				sum, n = sum+v, n+1
			}
		}
		return sum / float64(max(n, 1))
	}
	if eval {
		fmt.Printf("%d cases, signals %s: file Acc@%d %.3f with equal weights (k=60), %.3f with codesearch.DefaultFusion (function Acc@10 %.3f)\n",
			len(fit), signals, at, codesearch.FitScore(fit, codesearch.Fusion{K: 60}, at), codesearch.FitScore(fit, codesearch.DefaultFusion, at),
			funcAcc(codesearch.DefaultFusion))
		return nil
	}
	best := codesearch.FitFusion(fit, g)
	fmt.Printf("%d cases, signals %s, lists %s: %d fusions tried\n", len(fit), signals, strings.Join(g.Lists, ","), best.Tried)
	fmt.Printf("equal weights, k=60: file Acc@%d %.3f\n", at, codesearch.FitScore(fit, codesearch.Fusion{K: 60}, at))
	fmt.Printf("best: file Acc@%d %.3f\n", at, best.Acc)
	fmt.Printf("codesearch.Fusion{K: %g, Weights: map[string]float64{", best.Fusion.K)
	for i, l := range g.Lists {
		if i > 0 {
			fmt.Print(", ")
		}
		fmt.Printf("%q: %g", l, best.Fusion.Weights[l])
	}
	fmt.Println("}}")
	funcs := codesearch.FitFuncs(best.Fusion, g.Ks, g.Weights, funcAcc)
	fmt.Printf("functions fused with k=%g and the file's score weighing 1: function Acc@10 %.3f\n", best.Fusion.K, funcAcc(best.Fusion))
	fmt.Printf("best of %d: function Acc@10 %.3f with codesearch.FuncFusion{K: %g, File: %g}\n",
		funcs.Tried, funcs.Acc, funcs.Fusion.Funcs.K, funcs.Fusion.Funcs.File)
	// Each list's weight swept, the others at the best.
	fmt.Printf("\n| list | %s |\n| --- |%s\n", joinFloats(g.Weights, " | "), strings.Repeat(" ---: |", len(g.Weights)))
	for _, l := range g.Lists {
		row := []string{}
		for _, w := range g.Weights {
			f := codesearch.Fusion{K: best.Fusion.K, Weights: map[string]float64{}}
			for k, v := range best.Fusion.Weights {
				f.Weights[k] = v
			}
			f.Weights[l] = w
			row = append(row, fmt.Sprintf("%.3f", codesearch.FitScore(fit, f, at)))
		}
		fmt.Printf("| %s | %s |\n", l, strings.Join(row, " | "))
	}
	return nil
}

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func joinFloats(fs []float64, sep string) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(out, sep)
}
