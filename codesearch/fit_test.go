package codesearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFitFusion: the fit finds the weight that serves most cases, and
// among fusions that score the same it keeps the simplest: a list that
// changes no case keeps weight 1, and the constant stays 60.
func TestFitFusion(t *testing.T) {
	evidence := func(bm25, misleads, idle []string) *Evidence {
		e := &Evidence{}
		for _, l := range []struct {
			name  string
			items []string
		}{{ListBM25, bm25}, {"misleads", misleads}, {"idle", idle}} {
			r := ranked{}
			for i, f := range l.items {
				r[f] = float64(len(l.items) - i)
			}
			e.Lists = append(e.Lists, List{Name: l.name, Files: r})
		}
		return e
	}
	// "misleads" helps the first case and harms the two others.
	cases := []FitCase{
		{evidence([]string{"b.py", "a.py"}, []string{"a.py"}, []string{"z.py"}), []string{"a.py"}},
		{evidence([]string{"c.py", "d.py"}, []string{"d.py"}, []string{"z.py"}), []string{"c.py"}},
		{evidence([]string{"e.py", "f.py"}, []string{"f.py"}, nil), []string{"e.py"}},
	}
	g := FitGrid{Lists: []string{"idle", "misleads"}, Weights: []float64{0, 0.5, 1, 2}, Ks: []float64{30, 60}, At: 1}
	got := FitFusion(cases, g)
	want := FitResult{Fusion: Fusion{K: 60, Weights: map[string]float64{"idle": 1, "misleads": 0}}, Acc: 2.0 / 3, Tried: 32}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FitFusion (-want +got):\n%s", diff)
	}
	if acc := FitScore(cases, Fusion{K: 60}, 1); acc != 1.0/3 {
		t.Errorf("equal weights: Acc@1 %v, want 1/3", acc)
	}
	// The fitted fusion ranks as Fuse does.
	if r := cases[1].Evidence.Fuse(got.Fusion); r.Files[0] != "c.py" {
		t.Errorf("Fuse with the fit: files %q, want c.py first", r.Files)
	}
}

// TestFitFuncs: the functions' fit keeps the file fusion, prefers the
// plain fusion (the file's constant, file weight 1) on a tie, and finds
// the file weight the score asks for.
func TestFitFuncs(t *testing.T) {
	base := Fusion{K: 10, Weights: map[string]float64{"paths": 2}}
	ks, ws := []float64{10, 60}, []float64{0, 0.5, 1}
	flat := FitFuncs(base, ks, ws, func(Fusion) float64 { return 0.5 })
	if want := (FitResult{Fusion: Fusion{K: 10, Weights: base.Weights, Funcs: &FuncFusion{K: 10, File: 1}}, Acc: 0.5, Tried: 6}); !cmp.Equal(want, flat) {
		t.Errorf("on a tie: %+v, want %+v", flat, want)
	}
	half := FitFuncs(base, ks, ws, func(f Fusion) float64 {
		if f.Funcs.File == 0.5 && f.Funcs.K == 60 {
			return 1
		}
		return 0
	})
	if got := *half.Fusion.Funcs; got != (FuncFusion{K: 60, File: 0.5}) || half.Fusion.K != 10 {
		t.Errorf("fit %+v, want the functions at k=60, file weight 0.5, the files at k=10", half.Fusion)
	}
}
