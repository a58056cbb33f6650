package diffxyz

import (
	"errors"
	"strings"

	"github.com/patchbench/patchbench/metrics"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/extract"
	"github.com/patchbench/patchbench/patch/repair"
)

// Score holds the scores of one response. EM and IoU are set for every
// task; the other fields only for diffgen, and are nil otherwise.
type Score struct {
	EM, IoU float64

	Parsed, Applied, AppliedStrict *bool
	F1Plus, F1Minus                *float64
	// ApplyError says why a diffgen response did not apply tolerantly.
	ApplyError string
}

// Definitions defines every score and dimension of a Diff-XYZ results row,
// as written under "Definitions" in report.md.
var Definitions = map[string]string{
	"task":           "apply: old code + diff → new code; anti-apply: new code + diff → old code; diffgen: old code + new code → diff",
	"format":         "the edit format of the diff shown (apply, anti-apply) or asked for (diffgen): udiff, udiff-h, udiff-l, search-replace, v4a",
	"prompt":         "the prompt variant: with-format (a system prompt describing the format, with one worked example) or without-format (a generic assistant)",
	"lang":           "the programming language of the file",
	"size_class":     "the size of the reference edit by changed (added + removed) lines: small ≤ 7, medium 8–24, large > 24",
	"em":             "stripped exact match, 1 or 0. apply and anti-apply: the answer (the content of the first fenced code block of the response, else the whole response) equals the expected file (new code for apply, old code for anti-apply) once lines that are empty or white space only are removed from both and CRLF is read as LF; the remaining lines must be equal, in order, indentation included. diffgen: the same comparison of the file the response's edit produces when applied tolerantly to the old code, against the new code; 0 when it does not apply",
	"iou":            "stripped intersection over union: |A∩B| / |A∪B| of the sets of non-blank lines of the same two texts as em (order and repetition ignored); 0 for diffgen when the edit does not apply",
	"parsed":         "diffgen: the response holds an edit (found by patch/extract in fences, tags or raw text) that the strict parser of the requested format accepts, with at least one file section",
	"applied":        "diffgen: the response's edit applies to the old code with patchbench's default tolerant engine (patch/repair, as `patchbench apply --target PATH` does): extraction from the text, any format, repaired hunk counts, line numbers as hints, whitespace-tolerant placement, refusal of ambiguous or stale hunks",
	"applied_strict": "diffgen: parsed, a single file section, and it applies with exact context (as `patchbench apply --strict` does)",
	"f1_plus":        "diffgen: F1 = 2|P∩R| / (|P|+|R|) between the set P of non-blank added lines of the response's edit and the set R of non-blank added lines of the reference edit in the same format; the edit is the strictly parsed one, else the tolerantly applied one, else empty (F1 0). 1 when both sets are empty",
	"f1_minus":       "diffgen: the same F1 between the sets of non-blank removed lines",
	"failed":         "the model call failed (after retries) or the case timed out; a failed row has no scores and counts in no mean",
	"latency_ms":     "time of the model call in milliseconds (a cached response: the cache lookup)",
	"tokens":         "input plus output tokens the provider reported (a cached response: those of the original call)",
	"cost":           "US dollars, when a price is known",
	"n":              "number of results rows in the group",
}

// ScoreResponse scores a model's response to a case.
func ScoreResponse(c Case, response string) Score {
	switch c.Task {
	case Apply, AntiApply:
		answer := metrics.ExtractAnswer(response)
		expected := normEOL(c.Expected())
		return Score{EM: em(answer, expected), IoU: metrics.StrippedIoU(answer, expected)}
	}
	return scoreDiff(c, response)
}

func scoreDiff(c Case, response string) Score {
	var s Score
	var pred *patch.Patch
	parsed, applied, strict := false, false, false

	if ext, err := extract.Extract(response); err == nil {
		if p, err := patch.Parse(ext.Text, c.Format, patch.DefaultParseOptions); err == nil && len(p.Files) > 0 {
			parsed, pred = true, p
		}
	}

	path, old := c.Row.Path, c.Row.OldCode
	res, err := repair.Repair(response, repair.Options{Target: path, FS: patch.MapFS{path: old}, Strip: 1})
	var got string
	if err == nil && res.Status == repair.StatusApplied {
		for _, r := range res.Results {
			if r.Path == path && r.Content != nil {
				got, applied = string(r.Content), true
			}
		}
		if !applied {
			err = errors.New("the edit does not produce " + path)
		}
	}
	if applied {
		newCode := normEOL(c.Row.NewCode)
		got = normEOL(got)
		s.EM, s.IoU = em(got, newCode), metrics.StrippedIoU(got, newCode)
		if pred == nil {
			pred = res.Canonical()
		}
	} else if err != nil {
		s.ApplyError = err.Error()
	} else {
		s.ApplyError = res.Status
	}

	if parsed && len(pred.Files) == 1 && pred.Files[0].Op == patch.Modify {
		_, _, err := patch.ApplyFile(old, pred.Files[0], patch.ApplyOptions{})
		strict = err == nil
	}

	refAdd, refDel := editLines(referencePatch(c))
	var add, del []string
	if pred != nil {
		add, del = editLines(pred)
	}
	f1p, f1m := metrics.F1(add, refAdd), metrics.F1(del, refDel)
	s.Parsed, s.Applied, s.AppliedStrict = &parsed, &applied, &strict
	s.F1Plus, s.F1Minus = &f1p, &f1m
	return s
}

// referencePatch returns the case's reference edit, parsed in its format;
// should the dataset's text not parse, the engine's own edit stands in.
func referencePatch(c Case) *patch.Patch {
	if p, err := patch.Parse(c.Row.Diff(c.Format), c.Format, patch.DefaultParseOptions); err == nil && len(p.Files) > 0 {
		return p
	}
	fp := patch.Make(c.Row.Path, c.Row.Path, c.Row.OldCode, c.Row.NewCode, patch.DefaultMakeOptions())
	return &patch.Patch{Files: []*patch.FilePatch{fp}}
}

// editLines returns the non-blank inserted and deleted lines of p, without
// a trailing carriage return.
func editLines(p *patch.Patch) (added, removed []string) {
	for _, fp := range p.Files {
		for _, h := range fp.Hunks {
			for _, l := range h.Lines {
				text := strings.TrimSuffix(l.Text, "\r")
				if strings.TrimSpace(text) == "" {
					continue
				}
				switch l.Kind {
				case patch.LineInsert:
					added = append(added, text)
				case patch.LineDelete:
					removed = append(removed, text)
				}
			}
		}
	}
	return added, removed
}

func em(a, b string) float64 {
	if metrics.StrippedEM(a, b) {
		return 1
	}
	return 0
}

func normEOL(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
