package applybench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

var file = "one\ntwo\nthree\nfour\nfive\n"

var cases = []Case{
	{ID: "good", Family: "ok", Path: "f.txt", OldCode: file,
		Patch:    "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n",
		Expected: ptr("one\ntwo\nTHREE\nfour\nfive\n")},
	{ID: "nospace", Family: "ctx_no_space", Path: "f.txt", OldCode: file,
		Patch:    "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\ntwo\n-three\n+THREE\nfour\n",
		Expected: ptr("one\ntwo\nTHREE\nfour\nfive\n")},
	{ID: "stale", Family: "stale_base", Path: "f.txt", OldCode: file,
		Patch: "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n two\n-drei\n+THREE\n four\n"},
}

// The outcomes of patchbench and git apply on cases whose fate is known.
func TestRunScoresKnownCases(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	tools := []Tool{Patchbench(), Peers()["git"]}
	rows, err := Run(context.Background(), cases, tools, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"good/patchbench": Recovered, "good/git": Recovered,
		"nospace/patchbench": Recovered, "nospace/git": Refused,
		"stale/patchbench": Refused, "stale/git": Refused,
	}
	for _, r := range rows {
		if w := want[r.ID+"/"+r.Tool]; r.Outcome != w {
			t.Errorf("%s/%s: %s, want %s", r.ID, r.Tool, r.Outcome, w)
		}
	}
	s := Summarize(rows, tools)
	if got := s.Total["patchbench"]; got.Recovered != 2 || got.Recoverable != 2 || got.MustRefuseRefused != 1 || got.FalseApplies != 0 {
		t.Errorf("patchbench score %+v", got)
	}
	if got := s.Total["git"]; got.Recovered != 1 || got.Refused != 2 {
		t.Errorf("git score %+v", got)
	}
	var b bytes.Buffer
	if err := s.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| patchbench apply | 100.0% (2/2) | 2 | 0 | 0 | 1 | 1/1 |") {
		t.Errorf("table:\n%s", b.String())
	}
}

// A tool that changes the file and fails damages it; one that succeeds with
// the wrong content on a must-refuse case applies falsely.
func TestOutcomeClassification(t *testing.T) {
	write := func(content string, ok bool) Tool {
		return Tool{Name: "fake", Run: func(_ context.Context, dir, _ string, c Case) (bool, error) {
			return ok, os.WriteFile(filepath.Join(dir, c.Path), []byte(content), 0o644)
		}}
	}
	for _, tc := range []struct {
		tool Tool
		c    Case
		want string
	}{
		{write("one\ntwo\nTHREE  \nfour\nfive\n", true), cases[0], RecoveredWS},
		{write("garbage\n", false), cases[0], Damaged},
		{write(file, false), cases[0], Refused},
		{write("x\n", true), cases[2], FalseApply},
		{write("x\n", true), cases[0], FalseApply},
	} {
		rows, err := Run(context.Background(), []Case{tc.c}, []Tool{tc.tool}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if rows[0].Outcome != tc.want {
			t.Errorf("%s: %s, want %s", tc.c.ID, rows[0].Outcome, tc.want)
		}
	}
}

func TestLoadCases(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, c := range cases {
		b, _ := json.Marshal(c)
		zw.Write(append(b, '\n'))
	}
	zw.Close()
	gz := filepath.Join(dir, "c.jsonl.gz")
	os.WriteFile(gz, buf.Bytes(), 0o644)
	got, err := LoadCases(gz)
	if err != nil || len(got) != 3 || got[2].Expected != nil || *got[0].Expected != *cases[0].Expected {
		t.Fatalf("LoadCases = %v, %v", got, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"id":"a","path":"f","patch":"x"}`+"\n{oops\n"), 0o644)
	if _, err := LoadCases(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: err = %v, want one naming line 2", err)
	}
}
