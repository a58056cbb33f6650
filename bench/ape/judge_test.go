package ape

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVerdict checks the vote rule against APE-Bench's
// filter_judgement_results: over every TaskEvaluations grade of every
// vote, good and excellent are positive, poor and unacceptable negative,
// acceptable neither; the candidate passes when positives outnumber
// negatives. Worst and majority grade are recorded as APE-Bench's
// judgement pipeline does (majority: the most frequent, a tie going to the
// grade given first).
func TestVerdict(t *testing.T) {
	for _, tt := range []struct {
		name            string
		votes           [][]string
		pass            bool
		pos, neg        int
		worst, majority string
	}{
		{"issue's example", [][]string{{"Poor"}, {"Good"}, {"Acceptable"}, {"Excellent"}}, true, 2, 1, "Poor", "Poor"},
		{"all excellent", [][]string{{"Excellent"}, {"Excellent"}, {"Excellent"}, {"Excellent"}}, true, 4, 0, "Excellent", "Excellent"},
		{"tie 2-2", [][]string{{"Good"}, {"Good"}, {"Poor"}, {"Poor"}}, false, 2, 2, "Poor", "Good"},
		{"tie, poor first", [][]string{{"Poor"}, {"Poor"}, {"Good"}, {"Good"}}, false, 2, 2, "Poor", "Poor"},
		{"all acceptable", [][]string{{"Acceptable"}, {"Acceptable"}}, false, 0, 0, "Acceptable", "Acceptable"},
		{"one good among acceptable", [][]string{{"Acceptable"}, {"Good"}, {"Acceptable"}}, true, 1, 0, "Acceptable", "Acceptable"},
		{"three good one unacceptable", [][]string{{"Good"}, {"Unacceptable"}, {"Good"}, {"Good"}}, true, 3, 1, "Unacceptable", "Good"},
		{"no votes", nil, false, 0, 0, "", ""},
		{"only unreadable votes", [][]string{nil, nil, nil}, false, 0, 0, "", ""},
		{"unreadable counts for neither", [][]string{nil, {"Good"}, nil, nil}, true, 1, 0, "Good", "Good"},
		{"lower case, as APE-Bench lower-cases", [][]string{{"good"}, {"POOR"}, {"excellent"}}, true, 2, 1, "Poor", "Good"},
		{"unknown and padded grades count for neither", [][]string{{"Great"}, {" Good"}, {"Poor"}}, false, 0, 1, "Poor", "Poor"},
		{"template echoed", [][]string{{"Excellent | Good | Acceptable | Poor | Unacceptable"}}, false, 0, 0, "", ""},
		{"several tasks per vote", [][]string{{"Good", "Poor"}, {"Excellent", "Acceptable"}}, true, 2, 1, "Poor", "Good"},
		{"several tasks, negative wins", [][]string{{"Good", "Poor", "Unacceptable"}, {"Excellent", "Poor"}}, false, 2, 3, "Unacceptable", "Poor"},
		{"majority by count over order", [][]string{{"Acceptable"}, {"Excellent"}, {"Excellent"}, {"Unacceptable"}}, true, 2, 1, "Unacceptable", "Excellent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pass, c := Verdict(tt.votes)
			want := VoteCount{Positive: tt.pos, Negative: tt.neg, Worst: tt.worst, Majority: tt.majority}
			if pass != tt.pass || c != want {
				t.Errorf("Verdict(%q) = %v, %+v; want %v, %+v", tt.votes, pass, c, tt.pass, want)
			}
		})
	}
}

func TestParseJudgement(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Judgement
		ok       bool
	}{
		{"json block", "Analysis...\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"Good\"}, \"FinalOverallGrade\": \"Good\"}\n```\n",
			Judgement{Grades: []string{"Good"}, Final: "Good"}, true},
		{"last json block wins", "```json\n{\"TaskEvaluations\": {\"Task 1\": \"Poor\"}}\n```\nOn reflection:\n```json\n{\"TaskEvaluations\": {\"Task 1\": \"Excellent\", \"Task 2\": \"Acceptable\"}}\n```",
			Judgement{Grades: []string{"Excellent", "Acceptable"}}, true},
		{"keys in written order", "```json\n{\"TaskEvaluations\": {\"Task 2\": \"Poor\", \"Task 1\": \"Good\"}}\n```",
			Judgement{Grades: []string{"Poor", "Good"}}, true},
		{"repeated key: last value, first place", "```json\n{\"TaskEvaluations\": {\"Task 1\": \"Poor\", \"Task 2\": \"Good\", \"Task 1\": \"Excellent\"}}\n```",
			Judgement{Grades: []string{"Excellent", "Good"}}, true},
		{"bare object", "My grades: {\"TaskEvaluations\": {\"Task 1\": \"Acceptable\"}, \"FinalOverallGrade\": \"Acceptable\"} done",
			Judgement{Grades: []string{"Acceptable"}, Final: "Acceptable"}, true},
		{"value not a string", "```json\n{\"TaskEvaluations\": {\"Task 1\": 5}}\n```", Judgement{Grades: []string{"5"}}, true},
		{"last block is not JSON", "```json\n{\"TaskEvaluations\": {\"Task 1\": \"Good\"}}\n```\n```json\n{oops\n```", Judgement{}, false},
		{"block without TaskEvaluations", "```json\n{\"FinalOverallGrade\": \"Good\"}\n```", Judgement{}, false},
		{"TaskEvaluations not an object", "```json\n{\"TaskEvaluations\": [\"Good\"]}\n```", Judgement{}, false},
		{"the old line format", "Reason: fine\nGrade: Good\n", Judgement{}, false},
		{"nothing", "", Judgement{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJudgement(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseJudgement error %v, want ok=%v", err, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseJudgement (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseJudgement(f *testing.F) {
	f.Add("```json\n{\"TaskEvaluations\": {\"Task 1\": \"Good\"}}\n```")
	f.Add("{\"TaskEvaluations\": {\"a\": \"Poor\", \"a\": 1}} }")
	f.Add("```json```")
	f.Fuzz(func(t *testing.T, s string) {
		j, err := ParseJudgement(s)
		if err != nil && (j.Grades != nil || j.Final != "") {
			t.Fatalf("error %v with a judgement %+v", err, j)
		}
		pass, c := Verdict([][]string{j.Grades})
		if pass != (c.Positive > c.Negative) || c.Positive+c.Negative > len(j.Grades) {
			t.Fatalf("Verdict(%q) = %v, %+v", j.Grades, pass, c)
		}
	})
}

// TestReportKAboveN: a report of pass@k with k above the samples drawn is
// refused, not filled with pass@n under pass@k's name.
func TestReportKAboveN(t *testing.T) {
	dir := t.TempDir()
	row := `{"key":"t1#0","task":"t1","sample":0,"applied":true,"compile_pass":true,"judge_pass":true}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), []byte(row), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteReport(dir, 1, 1, 0); err != nil {
		t.Fatalf("k = n = 1: %v", err)
	}
	if rep, err := WriteReport(dir, 1, 2, 0); err == nil {
		t.Errorf("k 2 > n 1 gave a report: %+v", rep.Overall)
	}
}
