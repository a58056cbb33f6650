package repair

import (
	"slices"
	"strings"

	"github.com/patchbench/patchbench/patch"
)

// levelTiers names the tier of each patch.Placement Level of a Lenient
// (V4A) file patch.
var levelTiers = []string{TierExact, TierWhitespace, TierIndentation, TierPunctuation}

// ResultReport is the report of one file of a patch applied by patch.Apply:
// every hunk applied, at the tier its Placement's Level says.
func ResultReport(r patch.FileResult) FileReport {
	fr := FileReport{Path: r.Path, OldPath: r.OldPath, Op: r.Op.String(), Status: StatusApplied, Binary: r.Binary, Replaced: r.Replaced}
	if len(r.Placements) > 0 {
		fr.Hunks = make([]HunkReport, 0, len(r.Placements))
	}
	for i, pl := range r.Placements {
		tier := TierExact
		if pl.Level > 0 && pl.Level < len(levelTiers) {
			tier = levelTiers[pl.Level]
		}
		fr.Hunks = append(fr.Hunks, HunkReport{Hunk: i + 1, Status: StatusApplied, Tier: tier, Line: pl.Line, Offset: pl.Offset})
	}
	return fr
}

// applyV4A applies a well-formed V4A patch by the rules of codex's
// apply_patch, as strict mode does, so that tolerant mode accepts all that
// strict mode does. It reports false, leaving res alone, when the text does
// not parse, a path leaves the directory, or a hunk does not apply: the
// repair pipeline then takes over.
func applyV4A(text string, opts Options, res *Result) bool {
	if !strings.Contains(text, "*** Begin Patch") {
		return false // not an envelope: no need to split a large diff into lines
	}
	p, err := patch.ParseV4A(text)
	if err != nil {
		return false
	}
	for _, fp := range p.Files {
		for _, name := range []string{fp.OldPath, fp.NewPath} {
			if name != "" && patch.CheckPath(name) != nil {
				return false
			}
		}
	}
	for _, fp := range p.Files {
		if fp.Op != patch.Modify && fp.Op != patch.Rename {
			continue
		}
		if content, err := patch.ReadFileString(opts.FS, fp.OldPath); err == nil && newSideIn(content, fp.Hunks) {
			// Applied already, or to be applied again? The pipeline decides.
			return false
		}
	}
	rec := &recordFS{fsys: opts.FS}
	// One reading only: a chunk that fits two places, or whose anchor
	// names two lines, goes to the pipeline, which refuses it or decides
	// by the other chunks.
	results, err := patch.Apply(p, rec, patch.ApplyOptions{Unique: true})
	if err != nil {
		return false
	}
	for _, r := range results {
		for _, pl := range r.Placements {
			if pl.Level == 2 {
				// Placed by ignoring indentation: codex writes the added
				// lines as the hunk has them, which can move them to another
				// block (issue 8); the pipeline shifts them with the hunk.
				return false
			}
		}
	}
	for _, r := range results {
		for _, fp := range p.Files {
			if fp.OldPath == r.OldPath && r.Content != nil && refitsIn(string(r.Content), fp.Hunks) {
				return false
			}
		}
	}
	rec.fill(res, results)
	return true
}

// newSideIn reports whether a hunk may be applied already, lines compared
// without trailing whitespace: the new side of a hunk that adds a
// significant line (one that is not also a removed line) is in content;
// a hunk that adds lines that say little (braces, blank lines) has its
// new side in content over a place its old side fits (its old side fits
// again where it was applied: `}` added after `}`); a hunk with no old
// lines, which codex appends, finds content ending with its lines.
func newSideIn(content string, hunks []*patch.Hunk) bool {
	file := trimmedLines(content)
	for _, h := range hunks {
		os, ns, evidence := strictSides(h)
		switch {
		case evidence:
			if runIn(file, ns) {
				return true
			}
		case len(os) == 0:
			if endsWith(file, ns) {
				return true
			}
		case len(ns) > len(os):
			if runsOverlap(file, os, ns) {
				return true
			}
			// codex tries a chunk again without the blank context lines
			// that end it.
			for len(os) > 0 && os[len(os)-1] == "" && ns[len(ns)-1] == "" && h.Lines[len(h.Lines)-1].Kind == patch.LineContext {
				os, ns = os[:len(os)-1], ns[:len(ns)-1]
				if len(os) > 0 && runsOverlap(file, os, ns) {
					return true
				}
			}
		}
	}
	return false
}

// endsWith reports whether the file's lines (trimmedLines of its content)
// end with run, before the final blank line codex appends before.
func endsWith(file, run []string) bool {
	if len(file) > 0 && file[len(file)-1] == "" {
		file = file[:len(file)-1] // the empty text after the final newline
	}
	for range 2 {
		if len(file) >= len(run) && slices.Equal(file[len(file)-len(run):], run) {
			return true
		}
		if len(file) == 0 || file[len(file)-1] != "" {
			break
		}
		file = file[:len(file)-1]
	}
	return false
}

// runsOverlap reports whether run a and run b are in lines at places that
// share a line, or start at the same line.
func runsOverlap(lines, a, b []string) bool {
	for p := 0; p+len(b) <= len(lines); p++ {
		if !slices.Equal(lines[p:p+len(b)], b) {
			continue
		}
		for q := max(0, p-len(a)+1); q < p+len(b) && q+len(a) <= len(lines); q++ {
			if slices.Equal(lines[q:q+len(a)], a) {
				return true
			}
		}
	}
	return false
}

// refitsIn reports whether the result of a hunk that adds nothing of its
// own and shortens its lines holds its old side (one of two blank lines
// removed before a line leaves that run again): the pipeline judges it
// (refits), as a second apply would change the file again.
func refitsIn(content string, hunks []*patch.Hunk) bool {
	file := trimmedLines(content)
	for _, h := range hunks {
		os, ns, evidence := strictSides(h)
		if !evidence && len(os) > len(ns) && runIn(file, os) {
			return true
		}
	}
	return false
}

func trimmedLines(content string) []string {
	var file []string
	for _, l := range strings.Split(content, "\n") {
		file = append(file, strings.TrimRight(l, " \t\r"))
	}
	return file
}

// strictSides returns h's old and new sides, trailing whitespace trimmed,
// and whether it adds a significant line it does not also remove.
func strictSides(h *patch.Hunk) (os, ns []string, evidence bool) {
	removed := map[string]bool{}
	for _, l := range h.Lines {
		if l.Kind == patch.LineDelete {
			removed[strings.TrimRight(l.Text, " \t\r")] = true
		}
	}
	for _, l := range h.Lines {
		t := strings.TrimRight(l.Text, " \t\r")
		if l.Kind == patch.LineInsert && significant(t) && !removed[t] {
			evidence = true
		}
		if l.Kind != patch.LineDelete {
			ns = append(ns, t)
		}
		if l.Kind != patch.LineInsert {
			os = append(os, t)
		}
	}
	return os, ns, evidence
}

// runIn reports whether run is a contiguous run of lines.
func runIn(lines, run []string) bool {
	for p := 0; p+len(run) <= len(lines); p++ {
		if slices.Equal(lines[p:p+len(run)], run) {
			return true
		}
	}
	return false
}
