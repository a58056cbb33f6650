package loc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/symbols"
)

// clusterGap is how many unchanged lines may separate two changed lines of
// one target range (relace-mcp's _TARGET_RANGE_GAP): a line joins the
// cluster before it when it is at most clusterGap+1 lines past its end.
const clusterGap = 3

// maxClusters is how many ranges one function (or the code outside
// functions) keeps; more collapse into one range from the first to the
// last changed line (relace-mcp's _MAX_TARGET_RANGES_PER_FUNCTION).
const maxClusters = 2

// ChangedLines returns, for each file the unified diff modifies, deletes or
// renames, the lines of its old side the diff touches, as relace-mcp's
// build_locbench counts them: a deleted line is itself; an inserted line
// counts the old line before it (line 1 at the top of a file). Files the
// diff creates have no old side and are left out.
func ChangedLines(diff string) (map[string][]int, error) {
	p, err := patch.ParseUDiff(diff, patch.DefaultParseOptions)
	if err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		return nil, errors.New("no file changes in the patch")
	}
	out := map[string][]int{}
	for _, fp := range p.Files {
		if fp.OldPath == "" || fp.Op == patch.Create || fp.Binary {
			continue
		}
		set := map[int]bool{}
		for _, h := range fp.Hunks {
			line := h.OldStart
			if line < 1 {
				line = 1
			}
			for _, l := range h.Lines {
				switch l.Kind {
				case patch.LineContext:
					line++
				case patch.LineDelete:
					set[line] = true
					line++
				case patch.LineInsert:
					set[max(1, line-1)] = true
				}
			}
		}
		if len(set) == 0 {
			continue
		}
		lines := make([]int, 0, len(set))
		for l := range set {
			lines = append(lines, l)
		}
		sort.Ints(lines)
		out[fp.OldPath] = lines
	}
	return out, nil
}

// Cluster groups sorted, distinct lines into ranges: a line joins the
// current range when it is at most clusterGap+1 past its end. More than
// maxClusters ranges collapse into [first, last].
func Cluster(lines []int) []Range {
	if len(lines) == 0 {
		return nil
	}
	var rs []Range
	cur := Range{lines[0], lines[0]}
	for _, l := range lines[1:] {
		if l <= cur[1]+1+clusterGap {
			cur[1] = l
			continue
		}
		rs = append(rs, cur)
		cur = Range{l, l}
	}
	rs = append(rs, cur)
	if len(rs) > maxClusters {
		rs = []Range{{lines[0], lines[len(lines)-1]}}
	}
	return rs
}

// TruthFromDiff builds the ground truth of a unified diff against the
// repository at commit: per file, the changed old-side lines grouped by the
// innermost function holding them (package symbols), clustered (see
// [Cluster]) and clamped to that function; lines outside every function
// form one more group whose context is the whole file. A file of a
// language without a grammar has only that group and no functions.
func TruthFromDiff(ctx context.Context, rp *repo.Repo, commit, diff string, p *symbols.Parser) (GroundTruth, error) {
	changed, err := ChangedLines(diff)
	if err != nil {
		return GroundTruth{}, fmt.Errorf("parse patch: %w", err)
	}
	gt := GroundTruth{Files: map[string]FileTruth{}}
	paths := make([]string, 0, len(changed))
	for path := range changed {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		src, err := rp.ReadFile(ctx, commit, path)
		if err != nil {
			return GroundTruth{}, err
		}
		ft, err := fileTruth(ctx, path, src, changed[path], p)
		if err != nil {
			return GroundTruth{}, err
		}
		if len(ft.Ranges) > 0 {
			gt.Files[path] = ft
		}
	}
	if len(gt.Files) == 0 {
		return GroundTruth{}, errors.New("the patch changes no file that exists at base_commit")
	}
	return gt, nil
}

func fileTruth(ctx context.Context, path string, src []byte, lines []int, p *symbols.Parser) (FileTruth, error) {
	n := lineCount(src)
	var syms []symbols.Symbol
	if symbols.LanguageOf(path) != "" {
		res, err := p.Parse(ctx, path, src)
		if err != nil {
			return FileTruth{}, err
		}
		syms = res.Symbols
	}
	type group struct {
		fn    symbols.Symbol
		in    bool
		lines []int
	}
	groups := map[string]*group{}
	var order []*group
	for _, l := range lines {
		if l > n {
			l = n // an insertion at the end of the file, or a missing final newline
		}
		if l < 1 {
			continue
		}
		fn, in := symbols.Innermost(syms, l)
		key := ""
		if in {
			key = fmt.Sprintf("%s@%d", fn.Name, fn.Start)
		}
		g := groups[key]
		if g == nil {
			g = &group{fn: fn, in: in}
			groups[key] = g
			order = append(order, g)
		}
		if len(g.lines) == 0 || g.lines[len(g.lines)-1] != l {
			g.lines = append(g.lines, l)
		}
	}
	var ft FileTruth
	srcLines := bytes.Split(src, []byte("\n"))
	for _, g := range order {
		ctxRange := Range{1, n}
		if g.in {
			ctxRange = Range{g.fn.Start, g.fn.End}
			ft.Functions = append(ft.Functions, g.fn.Name)
			d := FunctionDef{Name: g.fn.Name, Class: enclosingClass(syms, g.fn), Range: ctxRange}
			if g.fn.Start <= len(srcLines) {
				d.Signature = strings.TrimSpace(string(srcLines[g.fn.Start-1]))
			}
			ft.Defs = append(ft.Defs, d)
		}
		for _, r := range Cluster(g.lines) {
			r = Range{max(r[0], ctxRange[0]), min(r[1], ctxRange[1])}
			if r[1] >= r[0] {
				ft.Ranges = append(ft.Ranges, r)
				ft.Context = append(ft.Context, ctxRange)
			}
		}
	}
	// Ranges in line order, each with its context.
	idx := make([]int, len(ft.Ranges))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ft.Ranges[idx[a]][0] < ft.Ranges[idx[b]][0] })
	rs, cs := make([]Range, len(idx)), make([]Range, len(idx))
	for i, j := range idx {
		rs[i], cs[i] = ft.Ranges[j], ft.Context[j]
	}
	ft.Ranges, ft.Context = rs, cs
	sort.Strings(ft.Functions)
	ft.Functions = dedupe(ft.Functions)
	if ft.Functions == nil {
		ft.Functions = []string{}
	}
	return ft, nil
}

// enclosingClass names the innermost class holding fn whose name fn's
// name continues ("" for a function outside classes): the class of a
// method, as relace-mcp's hard_gt entries name it.
func enclosingClass(syms []symbols.Symbol, fn symbols.Symbol) string {
	best := ""
	for _, s := range syms {
		if s.Kind == symbols.Class && s.Start <= fn.Start && fn.End <= s.End &&
			strings.HasPrefix(fn.Name, s.Name+".") && len(s.Name) > len(best) {
			best = s.Name
		}
	}
	return best
}

// lineCount counts lines as editors do (a last line without newline counts).
func lineCount(src []byte) int {
	n := 0
	for _, b := range src {
		if b == '\n' {
			n++
		}
	}
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}
