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
//
// For diffgen, the fields without a suffix are the paper's: the edit is
// read with the requested format's parser and applied exactly. The
// *Tolerant fields score the same response with patchbench's tolerant
// engine (any format, repaired counts, whitespace-tolerant placement).
type Score struct {
	EM, IoU float64

	Parsed, Applied *bool
	F1Plus, F1Minus *float64
	AppliedTolerant *bool
	EMTolerant      *float64
	IoUTolerant     *float64
	F1PlusTolerant  *float64
	F1MinusTolerant *float64
	// ApplyError says why a diffgen response did not apply tolerantly.
	ApplyError string
}

// Definitions defines every score and dimension of a Diff-XYZ results row,
// as written under "Definitions" in report.md.
var Definitions = map[string]string{
	"task":              "apply: old code + diff → new code; anti-apply: new code + diff → old code; diffgen: old code + new code → diff",
	"format":            "the edit format of the diff shown (apply, anti-apply) or asked for (diffgen): udiff, udiff-h, udiff-l, search-replace, v4a",
	"prompt":            "the prompt variant: with-format (a system prompt describing the format, with one worked example) or without-format (a generic assistant)",
	"lang":              "the programming language of the file",
	"size_class":        "the size of the reference edit by changed (added + removed) lines: small ≤ 7, medium 8–24, large > 24",
	"change_kind":       "what the reference edit does: add+delete (adds and removes lines), add-only, delete-only",
	"em":                "stripped exact match, 1 or 0. apply and anti-apply: the answer (read by patch/extract.Answer: the content of a fenced block that opens the response or stands in prose, else the whole response) equals the expected file (new code for apply, old code for anti-apply) once lines that are empty or white space only are removed from both, CRLF is read as LF and a byte order mark at the start is dropped; the remaining lines must be equal, in order, indentation included. diffgen (the paper's EM after applying): the same comparison of the file the response's edit produces when applied (see applied; the edit and the old code read with LF endings) to the old code, against the new code; 0 when it is not applied",
	"iou":               "stripped intersection over union: |A∩B| / |A∪B| of the sets of non-blank lines of the same two texts as em (order and repetition ignored); 0 for diffgen when the edit is not applied",
	"parsed":            "diffgen, the paper's parsing rate: the response holds an edit (found by patch/extract in fences, tags or raw text) that the parser of the requested format accepts, with at least one file section",
	"applied":           "diffgen, the paper's applying rate: parsed, a single file section that modifies the file, and it applies to the old code with exact context (as `patchbench apply --strict` does)",
	"f1_plus":           "diffgen: F1 = 2|P∩R| / (|P|+|R|) between the set P of non-blank added lines of the response's parsed edit and the set R of non-blank added lines of the reference edit in the same format; 0 when not parsed; 1 when both sets are empty",
	"f1_minus":          "diffgen: the same F1 between the sets of non-blank removed lines",
	"applied_tolerant":  "diffgen: the response's edit applies to the old code with patchbench's default tolerant engine (patch/repair, as `patchbench apply --target PATH` does): extraction from the text, any format, repaired hunk counts, line numbers as hints, whitespace-tolerant placement, refusal of ambiguous or stale hunks",
	"em_tolerant":       "diffgen: em of the file the tolerant engine produces (see applied_tolerant); 0 when it does not apply",
	"iou_tolerant":      "diffgen: iou of the file the tolerant engine produces; 0 when it does not apply",
	"f1_plus_tolerant":  "diffgen: f1_plus of the parsed edit, else of the edit the tolerant engine applied, else of no edit (an empty set)",
	"f1_minus_tolerant": "diffgen: f1_minus of the parsed edit, else of the edit the tolerant engine applied, else of no edit (an empty set)",
	"failed":            "the model call failed (after retries) or the case timed out; a failed row has no scores and counts in no mean",
	"latency_ms":        "time of the model call in milliseconds (a cached response: the cache lookup)",
	"tokens":            "input plus output tokens the provider reported (a cached response: those of the original call)",
	"cost":              "US dollars, when a price is known",
	"n":                 "number of results rows in the group",
}

// ScoreResponse scores a model's response to a case.
func ScoreResponse(c Case, response string) Score {
	switch c.Task {
	case Apply, AntiApply:
		answer := norm(extract.Answer(response))
		expected := norm(c.Expected())
		return Score{EM: em(answer, expected), IoU: metrics.StrippedIoU(answer, expected)}
	}
	return scoreDiff(c, response)
}

// scoreDiff scores a diffgen response twice: as the paper does (the
// requested format's parser, exact application) and with the tolerant
// engine.
func scoreDiff(c Case, response string) Score {
	var s Score
	path, old := c.Row.Path, c.Row.OldCode
	newCode := norm(c.Row.NewCode)
	refAdd, refDel := editLines(referencePatch(c))

	// The paper's reading.
	var parsedPatch *patch.Patch
	parsed, applied := false, false
	var emS, iouS, f1p, f1m float64
	if ext, err := extract.Extract(response); err == nil {
		// Line endings are not the model's to choose: the edit and the
		// file are both read with LF endings, as the answers of apply and
		// anti-apply are.
		if p, err := patch.Parse(normEOL(ext.Text), c.Format, patch.DefaultParseOptions); err == nil && len(p.Files) > 0 {
			parsed, parsedPatch = true, p
		}
	}
	if parsed {
		add, del := editLines(parsedPatch)
		f1p, f1m = metrics.F1(add, refAdd), metrics.F1(del, refDel)
		if len(parsedPatch.Files) == 1 && parsedPatch.Files[0].Op == patch.Modify {
			if got, _, err := patch.ApplyFile(normEOL(old), parsedPatch.Files[0], patch.ApplyOptions{}); err == nil {
				applied = true
				got = norm(got)
				emS, iouS = em(got, newCode), metrics.StrippedIoU(got, newCode)
			}
		}
	}
	s.EM, s.IoU = emS, iouS
	s.Parsed, s.Applied, s.F1Plus, s.F1Minus = &parsed, &applied, &f1p, &f1m

	// The tolerant engine.
	tolerant := false
	var emT, iouT float64
	res, err := repair.Repair(response, repair.Options{Target: path, FS: patch.MapFS{path: old}, Strip: 1})
	if err == nil && res.Status == repair.StatusApplied {
		for _, r := range res.Results {
			if r.Path == path && r.Content != nil {
				got := norm(string(r.Content))
				tolerant = true
				emT, iouT = em(got, newCode), metrics.StrippedIoU(got, newCode)
			}
		}
		if !tolerant {
			err = errors.New("the edit does not produce " + path)
		}
	}
	switch {
	case tolerant:
	case err != nil:
		s.ApplyError = err.Error()
	default:
		s.ApplyError = res.Status
	}
	pred := parsedPatch
	if pred == nil && tolerant {
		pred = res.Canonical()
	}
	var add, del []string
	if pred != nil {
		add, del = editLines(pred)
	}
	f1pT, f1mT := metrics.F1(add, refAdd), metrics.F1(del, refDel)
	s.AppliedTolerant, s.EMTolerant, s.IoUTolerant = &tolerant, &emT, &iouT
	s.F1PlusTolerant, s.F1MinusTolerant = &f1pT, &f1mT
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

// norm reads a file as its scores compare it: LF line endings, without a
// byte order mark at the start (an encoding mark, not a line of code).
func norm(s string) string { return normEOL(strings.TrimPrefix(s, "\ufeff")) }
