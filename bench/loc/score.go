package loc

import (
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/metrics"
)

// Ks are the cut-offs of the LocAgent metrics.
var Ks = []int{1, 3, 5, 10}

// locAgentMaxK is LocAgent's max_k per level, the largest k its evaluation
// takes (files at 1, 3, 5; modules and functions at 5, 10): the length of
// the ranked list that counts, and the most gold items Recall@k divides
// by. A k above it (file@10) counts its own k places.
var locAgentMaxK = map[string]int{"file": 5, "module": 10, "function": 10}

// Levels are the LocAgent levels, in report order.
var Levels = []string{"file", "module", "function"}

// RelaceMetrics are the relace-mcp metric names, in report order.
var RelaceMetrics = []string{"file_recall", "file_precision", "line_coverage", "line_precision_matched",
	"function_hit_rate", "function_target_hit_rate", "quality_score", "quality_score_v2"}

// MetricNames lists every metric a row can hold, in report order:
// the relace-mcp family, then LEVEL_METRIC@K.
func MetricNames() []string {
	names := append([]string(nil), RelaceMetrics...)
	for _, level := range Levels {
		for _, m := range []string{"acc", "recall", "precision", "ndcg", "map"} {
			for _, k := range Ks {
				names = append(names, fmt.Sprintf("%s_%s@%d", level, m, k))
			}
		}
	}
	return names
}

// Complete fills what an answer left implicit: files in the order of
// their first function or range when Files is empty, modules from the
// functions when Modules is empty.
func Complete(f Found) Found {
	if len(f.Files) == 0 {
		seen := map[string]bool{}
		add := func(p string) {
			if p != "" && !seen[p] {
				seen[p] = true
				f.Files = append(f.Files, p)
			}
		}
		for _, fn := range f.Functions {
			p, _, _ := strings.Cut(fn, ":")
			add(p)
		}
		for _, p := range sortedKeys(f.Ranges) {
			add(p)
		}
	}
	if len(f.Modules) == 0 {
		seen := map[string]bool{}
		for _, fn := range f.Functions {
			if m := ModuleOf(fn); !seen[m] {
				seen[m] = true
				f.Modules = append(f.Modules, m)
			}
		}
	}
	return f
}

// Score computes every metric of an answer against a case's ground
// truth. LocAgent metrics of a level whose ground truth is empty (no
// functions, e.g. a change outside every function) are left out, as
// LocAgent leaves such cases out of its means.
func Score(gt GroundTruth, f Found) map[string]float64 {
	f = Complete(f)
	// The relace-mcp family matches paths as relace-mcp does: both sides
	// through its normalize_path, then exactly (its match_paths).
	truth := metrics.Ranges{}
	for p, ft := range gt.Files {
		addRelace(truth, p, ft.Ranges)
	}
	// It scores the answer's {path: ranges}, as relace-mcp's
	// returned_files; an answer with no ranges at all (as LocAgent's)
	// names its files without lines.
	found := metrics.Ranges{}
	for p, rs := range f.Ranges {
		addRelace(found, p, rs)
	}
	if f.Ranges == nil {
		for _, p := range f.Files {
			addRelace(found, p, nil)
		}
	}
	m := map[string]float64{}
	fr := metrics.FileRecall(found, truth)
	fp := metrics.FilePrecision(found, truth)
	lc := metrics.LineCoverage(found, truth)
	lpm := metrics.LinePrecisionMatched(found, truth)
	fns := FunctionTargets(gt)
	for i := range fns {
		fns[i].Path = relacePath(fns[i].Path)
	}
	fh := metrics.FunctionHitRate(found, fns)
	m["file_recall"], m["file_precision"], m["line_coverage"] = fr, fp, lc
	m["line_precision_matched"] = lpm
	// A case without ground-truth functions has function hit rate 0 in its
	// quality score (relace-mcp's rule), but no row value: the means of
	// the function hit rates are over the cases that have functions, as
	// relace-mcp's avg_function_hit_rate is.
	if len(fns) > 0 {
		m["function_hit_rate"] = fh
		m["function_target_hit_rate"] = metrics.FunctionTargetHitRate(found, fns)
	}
	m["quality_score"] = metrics.QualityScore(fr, lpm, fh)
	m["quality_score_v2"] = metrics.QualityScoreV2(fr, fp, lpm, fh, len(fns) > 0)

	lists := map[string][2][]string{
		"file":     {f.Files, gt.FunctionPaths()},
		"module":   {f.Modules, gt.Modules()},
		"function": {stripInit(f.Functions), stripInit(gt.Functions())},
	}
	for _, level := range Levels {
		maxK := locAgentMaxK[level]
		pred, gold := lists[level][0], lists[level][1]
		if len(gold) == 0 {
			continue
		}
		for _, k := range Ks {
			r := metrics.RankedAt(pred, gold, k, maxK)
			m[fmt.Sprintf("%s_acc@%d", level, k)] = r.Acc
			m[fmt.Sprintf("%s_recall@%d", level, k)] = r.Recall
			m[fmt.Sprintf("%s_precision@%d", level, k)] = r.Precision
			m[fmt.Sprintf("%s_ndcg@%d", level, k)] = r.NDCG
			m[fmt.Sprintf("%s_map@%d", level, k)] = r.MAP
		}
	}
	return m
}

// stripInit names a constructor by its class, as LocAgent's evaluation
// does for function-level scores (Class.__init__ → Class).
func stripInit(fns []string) []string {
	out := make([]string, 0, len(fns))
	seen := map[string]bool{}
	for _, f := range fns {
		f = strings.TrimSuffix(f, ".__init__")
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// FunctionTargets are the ground truth's functions: each one's definition
// span and its target lines (the ranges whose context is that span). The
// spans are the Defs; a case without Defs takes them from its context
// ranges (the one of lines outside functions, starting at line 1 and the
// longest, left out when there are more contexts than functions), and a
// case without context ranges has one target per range of a file with
// functions, its span the range itself.
func FunctionTargets(gt GroundTruth) []metrics.FunctionTarget {
	var out []metrics.FunctionTarget
	for _, p := range gt.Paths() {
		ft := gt.Files[p]
		linesIn := func(span Range) []metrics.LineRange {
			var rs []Range
			for i, r := range ft.Ranges {
				if i < len(ft.Context) && ft.Context[i] == span {
					rs = append(rs, r)
				}
			}
			return toLineRanges(rs)
		}
		if len(ft.Defs) > 0 {
			for _, d := range ft.Defs {
				out = append(out, metrics.FunctionTarget{Path: p, Span: toLineRange(d.Range), Lines: linesIn(d.Range)})
			}
			continue
		}
		if len(ft.Functions) == 0 {
			continue
		}
		if len(ft.Context) != len(ft.Ranges) {
			for _, r := range ft.Ranges {
				out = append(out, metrics.FunctionTarget{Path: p, Span: toLineRange(r), Lines: toLineRanges([]Range{r})})
			}
			continue
		}
		var order []Range
		seen := map[Range]bool{}
		for _, c := range ft.Context {
			if !seen[c] {
				seen[c] = true
				order = append(order, c)
			}
		}
		if len(order) > len(ft.Functions) {
			// One group is the code outside functions: its context is the
			// whole file, the one starting at line 1 that reaches furthest.
			outside := -1
			for i, c := range order {
				if c[0] == 1 && (outside < 0 || c[1] > order[outside][1]) {
					outside = i
				}
			}
			if outside >= 0 {
				order = append(order[:outside], order[outside+1:]...)
			}
		}
		for _, c := range order {
			out = append(out, metrics.FunctionTarget{Path: p, Span: toLineRange(c), Lines: linesIn(c)})
		}
	}
	return out
}

func toLineRange(r Range) metrics.LineRange { return metrics.LineRange{Start: r[0], End: r[1]} }

func toLineRanges(rs []Range) []metrics.LineRange {
	out := make([]metrics.LineRange, len(rs))
	for i, r := range rs {
		out[i] = metrics.LineRange{Start: r[0], End: r[1]}
	}
	return out
}

// relacePath is relace-mcp's normalize_path: white space trimmed, one
// leading "./" dropped, then one leading "a/" or "b/" (a diff header's
// prefixes, which models copy), and the path read as pathlib reads it
// (empty and "." parts dropped, ".." kept). relace-mcp makes an absolute
// path relative to its clone; patchbench's repositories have no checkout,
// so an absolute path is relative only under /testbed/, where SWE-bench's
// images hold the repository (any other never matches).
func relacePath(p string) string {
	p = strings.TrimSpace(p)
	p = strings.TrimPrefix(p, "./")
	if strings.HasPrefix(p, "a/") || strings.HasPrefix(p, "b/") {
		p = p[2:]
	}
	abs := strings.HasPrefix(p, "/")
	var parts []string
	for _, part := range strings.Split(p, "/") {
		if part != "" && part != "." {
			parts = append(parts, part)
		}
	}
	p = strings.Join(parts, "/")
	if abs {
		p = "/" + p
		if rest, ok := strings.CutPrefix(p, testbed); ok && rest != "" {
			return rest
		}
	}
	if p == "" {
		return "."
	}
	return p
}

// addRelace adds a file's ranges to m under its [relacePath], as
// relace-mcp's normalize_returned_files does: ranges that are not
// [start >= 1, end >= start] are dropped, the file kept, and two spellings
// of one path pool their ranges.
func addRelace(m metrics.Ranges, p string, rs []Range) {
	p = relacePath(p)
	lr := m[p]
	for _, r := range rs {
		if r[0] >= 1 && r[1] >= r[0] {
			lr = append(lr, toLineRange(r))
		}
	}
	m[p] = lr
}
