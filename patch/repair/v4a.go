package repair

import (
	"github.com/patchbench/patchbench/patch"
)

// levelTiers names the tier of each patch.Placement Level of a Lenient
// (V4A) file patch.
var levelTiers = []string{TierExact, TierWhitespace, TierIndentation, TierPunctuation}

// ResultReport is the report of one file of a patch applied by patch.Apply:
// every hunk applied, at the tier its Placement's Level says.
func ResultReport(r patch.FileResult) FileReport {
	fr := FileReport{Path: r.Path, OldPath: r.OldPath, Op: r.Op.String(), Status: StatusApplied, Binary: r.Binary, Replaced: r.Replaced}
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
	rec := &recordFS{fsys: opts.FS}
	results, err := patch.Apply(p, rec, patch.ApplyOptions{})
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
	rec.fill(res, results)
	return true
}
