package swe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/patch/repair"
	"github.com/patchbench/patchbench/report/html"
)

// RunReport is SWE-bench's run report (schema_version 2) with patchbench's
// counts added. Its SWE-bench fields are the official harness's, counted
// from each row's status under the harness (the raw model_patch through
// its apply chain, as MODEL.RUN_ID.json counts them), so that a report set
// beside the harness's reads the same; the same fields counted from
// patchbench's own statuses (the repaired edits) are under "patchbench".
//
// The SWE-bench fields follow its harness: total_instances counts the
// dataset (the selected instances with --instance-ids); submitted, the
// predictions for dataset instances, selected or not; an instance whose tests ran is
// completed, and resolved or unresolved; an empty patch is empty_patch; a
// malformed edit, one that does not apply, and an infrastructure failure are
// errors (the official harness also reports a patch it cannot apply as an
// error); dataset instances without a prediction are incomplete, and so are
// applied instances of a run without the test stage (--no-tests), which were
// not run to completion.
type RunReport struct {
	SummaryReport

	// Patchbench is the summary counted from patchbench's statuses: what
	// the run's applier (the tolerant one by default) made of the
	// predictions.
	Patchbench SummaryReport `json:"patchbench"`

	// RunID names the run.
	RunID string `json:"run_id"`
	// StatusCounts counts the instances of each patchbench status (every
	// status is present); PatchStatusCounts counts applied and
	// applied_repaired among the edits that applied, whatever their tests
	// did.
	StatusCounts      map[string]int `json:"status_counts"`
	PatchStatusCounts map[string]int `json:"patch_status_counts"`
	// CreatedFilesInstances and TestFilesInstances count the instances whose
	// edit creates files absent at base, and touches test files.
	CreatedFilesInstances int `json:"created_files_instances"`
	TestFilesInstances    int `json:"test_files_instances"`
}

// SummaryReport is the official harness's run report (its
// reporting.make_run_report, schema_version 2), the file
// MODEL.RUN_ID.json.
type SummaryReport struct {
	TotalInstances      int      `json:"total_instances"`
	SubmittedInstances  int      `json:"submitted_instances"`
	CompletedInstances  int      `json:"completed_instances"`
	ResolvedInstances   int      `json:"resolved_instances"`
	UnresolvedInstances int      `json:"unresolved_instances"`
	EmptyPatchInstances int      `json:"empty_patch_instances"`
	ErrorInstances      int      `json:"error_instances"`
	CompletedIDs        []string `json:"completed_ids"`
	IncompleteIDs       []string `json:"incomplete_ids"`
	EmptyPatchIDs       []string `json:"empty_patch_ids"`
	SubmittedIDs        []string `json:"submitted_ids"`
	ResolvedIDs         []string `json:"resolved_ids"`
	UnresolvedIDs       []string `json:"unresolved_ids"`
	ErrorIDs            []string `json:"error_ids"`
	SchemaVersion       int      `json:"schema_version"`
}

// InstanceReport is SWE-bench's per-instance report, the value under the
// instance id in instances/ID/report.json. tests_status is always present;
// its lists are empty when the tests did not run.
type InstanceReport struct {
	PatchIsNone              bool        `json:"patch_is_None"`
	PatchExists              bool        `json:"patch_exists"`
	PatchSuccessfullyApplied bool        `json:"patch_successfully_applied"`
	Resolved                 bool        `json:"resolved"`
	TestsStatus              TestsStatus `json:"tests_status"`
}

// ErrorAnalysis is errors.json: counts by status, by repository, by failure
// class and by repair, and one entry per failed instance.
type ErrorAnalysis struct {
	RunID     string                    `json:"run_id"`
	Instances int                       `json:"instances"`
	ByStatus  map[string]int            `json:"by_status"`
	ByRepo    map[string]map[string]int `json:"by_repo"`
	// ByClass counts failed instances by a short class of their reason,
	// such as "apply_failed: context not found".
	ByClass map[string]int `json:"by_class"`
	// Harness maps each status present to the official harness's and
	// SWE4CC's class; BySWE4CC and ByHarnessReport count the instances
	// in those classes, to set beside their tables.
	Harness         map[string]HarnessClass `json:"harness"`
	BySWE4CC        map[string]int          `json:"by_swe4cc"`
	ByHarnessReport map[string]int          `json:"by_harness_report"`
	// SWE4CC is SWE4CC's table of the run under the official harness:
	// each instance's swe4cc_class, counted. BeforeAfter sets each class's
	// count under the official chain on the raw patches beside its count
	// under this run's applier, both measured.
	SWE4CC      SWE4CCTable   `json:"swe4cc"`
	BeforeAfter []BeforeAfter `json:"before_after"`
	// Repairs counts, for each repair, the instances whose edit needed it.
	Repairs      map[string]int `json:"repairs"`
	CreatedFiles []string       `json:"created_files"`
	TestFiles    []string       `json:"test_files"`
	Failed       []FailedEntry  `json:"failed"`
}

// SWE4CCTable is SWE4CC's error table: the instances of each class, their
// share of all instances and, for the classes of the official report's
// error_ids, of the errors; and the resolve rate.
type SWE4CCTable struct {
	Instances int `json:"instances"`
	// Errors counts the instances in the official report's error_ids.
	Errors   int `json:"errors"`
	Resolved int `json:"resolved"`
	// Completed counts resolved and unresolved instances.
	Completed int `json:"completed"`
	// ResolveRate is Resolved / Instances; CompletedResolveRate is
	// Resolved / Completed (SWE4CC gives both).
	ResolveRate          float64       `json:"resolve_rate"`
	CompletedResolveRate float64       `json:"completed_resolve_rate"`
	Classes              []SWE4CCCount `json:"classes"`
}

// SWE4CCCount is one class of a [SWE4CCTable].
type SWE4CCCount struct {
	Class     string  `json:"class"`
	Instances int     `json:"instances"`
	ShareAll  float64 `json:"share_of_all"`
	// ShareErrors is the share of the errors, for error classes only.
	ShareErrors *float64 `json:"share_of_errors,omitempty"`
}

// BeforeAfter is one class's count under the official apply chain on the
// raw patches (swe4cc_class) and under the run's applier (the class of the
// run's own status).
type BeforeAfter struct {
	Class    string `json:"class"`
	Official int    `json:"official"`
	Applier  int    `json:"applier"`
}

// applierClass is the SWE4CC class of a row's own status, under the run's
// applier: infrastructure failures are read as SWE4CC reads them.
func applierClass(r Row) string {
	st := r.FinalStatus()
	if IsInfra(st) {
		return SWE4CCClass(st, r.Reason+"\n"+r.Error)
	}
	return HarnessClassOf(st).SWE4CC
}

// isErrorClass reports whether instances of class are in the official
// report's error_ids.
func isErrorClass(class string) bool {
	switch class {
	case SWE4CCMalformed, SWE4CCApplyFailed, SWE4CCDockerRateLimit, SWE4CCUnknown:
		return true
	}
	return false
}

func makeSWE4CCTable(rows []Row) (SWE4CCTable, []BeforeAfter) {
	t := SWE4CCTable{Instances: len(rows), Classes: []SWE4CCCount{}}
	official, applier := map[string]int{}, map[string]int{}
	for _, r := range rows {
		c := r.SWE4CCClass
		if c == "" || r.Failed {
			c = SWE4CCClass(r.harnessStatus(), r.HarnessLog+"\n"+r.Reason+"\n"+r.Error)
		}
		official[c]++
		applier[applierClass(r)]++
		if isErrorClass(c) {
			t.Errors++
		}
	}
	t.Resolved = official[SWE4CCResolved]
	t.Completed = t.Resolved + official[SWE4CCUnresolved]
	t.ResolveRate = ratio(t.Resolved, t.Instances)
	t.CompletedResolveRate = ratio(t.Resolved, t.Completed)
	var ba []BeforeAfter
	for _, c := range SWE4CCClasses {
		if n := official[c]; n > 0 {
			cc := SWE4CCCount{Class: c, Instances: n, ShareAll: ratio(n, t.Instances)}
			if isErrorClass(c) {
				e := ratio(n, t.Errors)
				cc.ShareErrors = &e
			}
			t.Classes = append(t.Classes, cc)
		}
		if official[c] > 0 || applier[c] > 0 {
			ba = append(ba, BeforeAfter{Class: c, Official: official[c], Applier: applier[c]})
		}
	}
	return t, ba
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// FailedEntry is one instance that did not end applied or resolved.
type FailedEntry struct {
	InstanceID string `json:"instance_id"`
	Repo       string `json:"repo"`
	Status     string `json:"status"`
	Class      string `json:"class"`
	Reason     string `json:"reason"`
	// Harness is the status in the official harness's and SWE4CC's terms.
	Harness HarnessClass `json:"harness"`
}

// IsFailure reports whether status counts as a failed instance in the error
// analysis: anything but applied, applied_repaired, already_applied and
// resolved.
func IsFailure(status string) bool {
	return status != StatusApplied && status != StatusAppliedRepaired && status != StatusAlreadyApplied && status != StatusResolved
}

// WriteOutputs writes report.json, instances/ID/report.json and patch.diff,
// errors.json, errors.md, predictions.repaired.jsonl and report.html for the rows of a
// run into dir. Every file is written atomically.
func WriteOutputs(dir, runID string, in *inputs, rows []Row) error {
	sorted := append([]Row(nil), rows...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].InstanceID < sorted[j].InstanceID })

	rep := makeRunReport(runID, in, sorted, false)
	rep.Patchbench, rep.SummaryReport = rep.SummaryReport, makeRunReport(runID, in, sorted, true).SummaryReport
	if err := writeJSON(filepath.Join(dir, "report.json"), rep); err != nil {
		return err
	}
	// The official harness's files; an instance whose files cannot be
	// written is named after the others are (see instErrs below).
	harnessErr := writeHarnessFiles(dir, runID, in, sorted)
	var repaired bytes.Buffer
	enc := json.NewEncoder(&repaired)
	enc.SetEscapeHTML(false)
	// An instance whose files cannot be written is named in the error,
	// after every other file of the run is written: one instance never
	// costs the run its reports.
	instErrs := []error{harnessErr}
	writeInstance := func(r Row) error {
		idir := filepath.Join(dir, "instances", SafeID(r.InstanceID))
		if err := os.MkdirAll(idir, 0o755); err != nil {
			return err
		}
		if err := writeJSONFast(filepath.Join(idir, "report.json"), map[string]InstanceReport{r.InstanceID: instanceReport(r)}); err != nil {
			return err
		}
		diff := filepath.Join(idir, "patch.diff")
		if r.RepairedPatch == "" {
			os.Remove(diff)
			return nil
		}
		return writeAtomic(diff, []byte(r.RepairedPatch), false)
	}
	for _, r := range sorted {
		if err := writeInstance(r); err != nil {
			instErrs = append(instErrs, fmt.Errorf("swe: instance %q: %w", r.InstanceID, err))
		}
		if r.RepairedPatch == "" {
			continue
		}
		model := r.Model
		if model == "" {
			model = in.predsByID[r.InstanceID].Model
		}
		enc.Encode(map[string]string{"instance_id": r.InstanceID, "model_name_or_path": model, "model_patch": r.RepairedPatch})
	}
	if err := writeAtomic(filepath.Join(dir, "predictions.repaired.jsonl"), repaired.Bytes(), true); err != nil {
		return err
	}
	ea := makeErrorAnalysis(runID, sorted)
	if err := writeJSON(filepath.Join(dir, "errors.json"), ea); err != nil {
		return err
	}
	var md bytes.Buffer
	ea.WriteMarkdown(&md)
	if err := writeAtomic(filepath.Join(dir, "errors.md"), md.Bytes(), true); err != nil {
		return err
	}
	// report.html: charts and every instance, for people to browse; it
	// reads results.jsonl, which has the runner's fields too.
	if _, err := os.Stat(filepath.Join(dir, "results.jsonl")); err != nil {
		return errors.Join(instErrs...)
	}
	if err := html.WriteRunDir(dir, "SWE-bench: "+runID, Page(), nil); err != nil {
		return fmt.Errorf("swe: %w", err)
	}
	return errors.Join(instErrs...)
}

func instanceReport(r Row) InstanceReport {
	ir := InstanceReport{
		// The harness's: whether model_patch is null, and its negation,
		// whatever the string holds.
		PatchIsNone:              r.PatchIsNone,
		PatchExists:              !r.PatchIsNone,
		PatchSuccessfullyApplied: r.PatchStatus != "",
		Resolved:                 r.FinalStatus() == StatusResolved,
	}
	empty := TestGroup{Success: []string{}, Failure: []string{}}
	ir.TestsStatus = TestsStatus{FailToPass: empty, PassToPass: empty, FailToFail: empty, PassToFail: empty}
	if r.Test != nil && r.Test.Status != nil {
		ir.TestsStatus = *r.Test.Status
	}
	return ir
}

// makeRunReport makes report.json from the rows' statuses; with harness
// set, the official harness's summary from their statuses under the
// harness (Row.HarnessStatus).
func makeRunReport(runID string, in *inputs, rows []Row, harness bool) RunReport {
	rep := RunReport{
		SummaryReport: SummaryReport{
			SchemaVersion: 2,
			CompletedIDs:  []string{}, IncompleteIDs: []string{}, EmptyPatchIDs: []string{}, SubmittedIDs: []string{},
			ResolvedIDs: []string{}, UnresolvedIDs: []string{}, ErrorIDs: []string{},
		},
		RunID:        runID,
		StatusCounts: map[string]int{}, PatchStatusCounts: map[string]int{StatusApplied: 0, StatusAppliedRepaired: 0, StatusAlreadyApplied: 0},
	}
	for _, s := range Statuses {
		rep.StatusCounts[s] = 0
	}
	byID := map[string]Row{}
	for _, r := range rows {
		byID[r.InstanceID] = r
	}
	ids := make([]string, 0, len(in.dataset))
	for _, inst := range in.dataset {
		if in.selected == nil || in.selected[inst.InstanceID] {
			ids = append(ids, inst.InstanceID)
		}
	}
	sort.Strings(ids)
	rep.TotalInstances = len(ids)
	rep.SubmittedIDs = append(rep.SubmittedIDs, in.submitted...)
	sort.Strings(rep.SubmittedIDs)
	for _, id := range ids {
		if _, ok := in.predsByID[id]; !ok {
			rep.IncompleteIDs = append(rep.IncompleteIDs, id)
			continue
		}
		r, ok := byID[id]
		if !ok {
			rep.IncompleteIDs = append(rep.IncompleteIDs, id)
			continue
		}
		st := r.FinalStatus()
		if harness {
			st = r.harnessStatus()
		}
		rep.StatusCounts[st]++
		if r.PatchStatus != "" {
			rep.PatchStatusCounts[r.PatchStatus]++
		}
		if len(r.CreatedFiles) > 0 {
			rep.CreatedFilesInstances++
		}
		if len(r.TestFiles) > 0 {
			rep.TestFilesInstances++
		}
		switch st {
		case StatusResolved:
			rep.CompletedIDs = append(rep.CompletedIDs, id)
			rep.ResolvedIDs = append(rep.ResolvedIDs, id)
		case StatusUnresolved:
			rep.CompletedIDs = append(rep.CompletedIDs, id)
			rep.UnresolvedIDs = append(rep.UnresolvedIDs, id)
		case StatusEmptyPatch:
			rep.EmptyPatchIDs = append(rep.EmptyPatchIDs, id)
		case StatusApplied, StatusAppliedRepaired, StatusAlreadyApplied:
			rep.IncompleteIDs = append(rep.IncompleteIDs, id)
		default:
			rep.ErrorIDs = append(rep.ErrorIDs, id)
		}
	}
	rep.SubmittedInstances = len(rep.SubmittedIDs)
	rep.CompletedInstances = len(rep.CompletedIDs)
	rep.ResolvedInstances = len(rep.ResolvedIDs)
	rep.UnresolvedInstances = len(rep.UnresolvedIDs)
	rep.EmptyPatchInstances = len(rep.EmptyPatchIDs)
	rep.ErrorInstances = len(rep.ErrorIDs)
	return rep
}

func makeErrorAnalysis(runID string, rows []Row) *ErrorAnalysis {
	ea := &ErrorAnalysis{
		RunID: runID, Instances: len(rows),
		ByStatus: map[string]int{}, ByRepo: map[string]map[string]int{}, ByClass: map[string]int{},
		Repairs: map[string]int{}, CreatedFiles: []string{}, TestFiles: []string{}, Failed: []FailedEntry{},
		Harness: map[string]HarnessClass{}, BySWE4CC: map[string]int{}, ByHarnessReport: map[string]int{},
	}
	ea.SWE4CC, ea.BeforeAfter = makeSWE4CCTable(rows)
	for _, r := range rows {
		st := r.FinalStatus()
		ea.ByStatus[st]++
		hc := HarnessClassOf(st)
		ea.Harness[st] = hc
		ea.BySWE4CC[hc.SWE4CC]++
		ea.ByHarnessReport[hc.Report]++
		if ea.ByRepo[r.Repo] == nil {
			ea.ByRepo[r.Repo] = map[string]int{}
		}
		ea.ByRepo[r.Repo][st]++
		for _, rp := range r.Repairs {
			ea.Repairs[rp]++
		}
		if len(r.CreatedFiles) > 0 {
			ea.CreatedFiles = append(ea.CreatedFiles, r.InstanceID)
		}
		if len(r.TestFiles) > 0 {
			ea.TestFiles = append(ea.TestFiles, r.InstanceID)
		}
		if !IsFailure(st) {
			continue
		}
		reason := r.Reason
		if r.Failed && r.Error != "" {
			reason = r.Error
		}
		cl := reasonClass(st, r.Refusal, reason)
		ea.ByClass[cl]++
		ea.Failed = append(ea.Failed, FailedEntry{InstanceID: r.InstanceID, Repo: r.Repo, Status: st, Class: cl, Reason: reason, Harness: hc})
	}
	return ea
}

// refusalClasses are the classes of the engine's refusals, by kind; the
// kinds not listed are "context not found".
var refusalClasses = map[repair.Kind]string{
	KindChangesNothing:         "changes nothing",
	repair.KindAmbiguous:       "ambiguous",
	repair.KindOverlap:         "overlapping hunks",
	repair.KindNoFile:          "no file named",
	repair.KindFileNotFound:    "file not found",
	repair.KindFileExists:      "file exists",
	repair.KindBinary:          "binary",
	repair.KindBadDeletion:     "bad deletion",
	repair.KindContextNotFound: "context not found",
}

// reasonClass gives a failure a short class for counting: the status, and for
// patch failures the kind of refusal. A refusal of the engine is classed by
// its kind; one without (the official chain's and git apply's, whose
// reasons are their output, and rows written before rows had kinds) by the
// words of its reason.
func reasonClass(status string, kind repair.Kind, reason string) string {
	if status != StatusApplyFailed {
		return status
	}
	if kind != repair.KindNone {
		cl, ok := refusalClasses[kind]
		if !ok {
			cl = "context not found"
		}
		return status + ": " + cl
	}
	r := strings.ToLower(reason)
	for _, k := range []struct{ needle, class string }{
		{"already applied", "already applied"},
		{"changes nothing", "changes nothing"},
		{"ambiguous", "ambiguous"},
		{"overlaps", "overlapping hunks"},
		{"names no file", "no file named"},
		{"cannot find", "file not found"},
		{"does not exist", "file not found"},
		{"already exists", "file exists"},
		{"binary", "binary"},
		{"deletes the file", "bad deletion"},
	} {
		if strings.Contains(r, k.needle) {
			return status + ": " + k.class
		}
	}
	return status + ": context not found"
}

// WriteMarkdown writes the analysis as errors.md.
func (ea *ErrorAnalysis) WriteMarkdown(b *bytes.Buffer) {
	fmt.Fprintf(b, "# Error analysis: %s\n\n%d instances.\n\n", ea.RunID, ea.Instances)
	b.WriteString("## By status\n\n| status | instances | share |\n| --- | ---: | ---: |\n")
	for _, s := range Statuses {
		if n := ea.ByStatus[s]; n > 0 {
			fmt.Fprintf(b, "| %s | %d | %.1f%% |\n", s, n, 100*float64(n)/float64(max(ea.Instances, 1)))
		}
	}
	var present []string
	for _, s := range Statuses {
		if ea.ByStatus[s] > 0 {
			present = append(present, s)
		}
	}
	b.WriteString("\n## In the official harness's and SWE4CC's terms\n\n")
	b.WriteString("| status | instances | SWE4CC class | official report | official log |\n| --- | ---: | --- | --- | --- |\n")
	for _, s := range present {
		hc := HarnessClassOf(s)
		log := hc.Log
		if log == "" {
			log = "(not run)"
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | `%s` |\n", s, ea.ByStatus[s], hc.SWE4CC, hc.Report, log)
	}
	ea.writeSWE4CC(b)
	repos := sortedKeys(ea.ByRepo)
	b.WriteString("\n## By repository\n\n| repository |")
	for _, s := range present {
		fmt.Fprintf(b, " %s |", s)
	}
	b.WriteString(" total |\n| --- |")
	for range present {
		b.WriteString(" ---: |")
	}
	b.WriteString(" ---: |\n")
	for _, repo := range repos {
		fmt.Fprintf(b, "| %s |", repo)
		total := 0
		for _, s := range present {
			fmt.Fprintf(b, " %d |", ea.ByRepo[repo][s])
			total += ea.ByRepo[repo][s]
		}
		fmt.Fprintf(b, " %d |\n", total)
	}
	if len(ea.ByClass) > 0 {
		b.WriteString("\n## Failures by class\n\n| class | instances |\n| --- | ---: |\n")
		for _, k := range sortedByCount(ea.ByClass) {
			fmt.Fprintf(b, "| %s | %d |\n", k, ea.ByClass[k])
		}
	}
	if len(ea.Repairs) > 0 {
		b.WriteString("\n## Repairs\n\nInstances whose edit needed each repair.\n\n| repair | instances |\n| --- | ---: |\n")
		for _, k := range sortedByCount(ea.Repairs) {
			fmt.Fprintf(b, "| %s | %d |\n", k, ea.Repairs[k])
		}
	}
	fmt.Fprintf(b, "\nEdits that create files absent at base: %d. Edits that touch test files: %d.\n", len(ea.CreatedFiles), len(ea.TestFiles))
	if len(ea.Failed) > 0 {
		b.WriteString("\n## Failed instances\n\n")
		for _, f := range ea.Failed {
			fmt.Fprintf(b, "- `%s` (%s) %s [%s]: %s\n", f.InstanceID, f.Repo, f.Status, f.Harness.SWE4CC, oneLine(f.Reason))
		}
	}
}

// writeSWE4CC writes SWE4CC's table and the before/after table.
func (ea *ErrorAnalysis) writeSWE4CC(b *bytes.Buffer) {
	t := ea.SWE4CC
	b.WriteString("\n## SWE4CC's table (the official harness's classes)\n\n")
	b.WriteString("Each instance's `swe4cc_class`: what the official harness does with the raw `model_patch` and, when it applies, the tests on the files it wrote.\n\n")
	b.WriteString("| class | instances | share of all | share of errors |\n| --- | ---: | ---: | ---: |\n")
	for _, c := range t.Classes {
		share := "-"
		if c.ShareErrors != nil {
			share = fmt.Sprintf("%.1f%%", 100**c.ShareErrors)
		}
		fmt.Fprintf(b, "| %s | %d | %.1f%% | %s |\n", c.Class, c.Instances, 100*c.ShareAll, share)
	}
	fmt.Fprintf(b, "\nErrors: %d of %d (%.1f%%). Resolved: %d of %d (resolve rate %.1f%%); of the %d completed, %.1f%%.\n",
		t.Errors, t.Instances, 100*ratio(t.Errors, t.Instances), t.Resolved, t.Instances, 100*t.ResolveRate, t.Completed, 100*t.CompletedResolveRate)
	b.WriteString("\n## Before and after: the official chain on the raw patches, and this run's applier\n\n")
	b.WriteString("| class | official chain | this run's applier | change |\n| --- | ---: | ---: | ---: |\n")
	for _, r := range ea.BeforeAfter {
		fmt.Fprintf(b, "| %s | %d | %d | %+d |\n", r.Class, r.Official, r.Applier, r.Applier-r.Official)
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedByCount(m map[string]int) []string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("swe: encode %s: %w", path, err)
	}
	return writeAtomic(path, append(b, '\n'), true)
}

// writeJSONFast is writeJSON without the sync, for the many per-instance
// files.
func writeJSONFast(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("swe: encode %s: %w", path, err)
	}
	return writeAtomic(path, append(b, '\n'), false)
}
