package loc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCasesRoundTrip(t *testing.T) {
	cases := []Case{{
		ID: "a__b-1", Repo: "a/b", BaseCommit: "abc", Query: "it <breaks>",
		GroundTruth: GroundTruth{Files: map[string]FileTruth{
			"pkg/x.py": {Ranges: []Range{{3, 5}}, Functions: []string{"C.m", "f"}, Context: []Range{{1, 9}}},
			"y.go":     {Ranges: []Range{{1, 1}}, Functions: []string{"T.M"}},
		}},
		Category: "Bug Report", Source: "d.jsonl",
	}, {ID: "empty", Repo: "a/b", BaseCommit: "abc"}}
	path := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := WriteCases(path, cases); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCases(path)
	if err != nil {
		t.Fatal(err)
	}
	cases[1].GroundTruth.Files = map[string]FileTruth{}
	if diff := cmp.Diff(cases, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	g := cases[0].GroundTruth
	if diff := cmp.Diff([]string{"pkg/x.py:C.m", "pkg/x.py:f", "y.go:T.M"}, g.Functions()); diff != "" {
		t.Errorf("Functions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pkg/x.py:C", "pkg/x.py:f", "y.go:T"}, g.Modules()); diff != "" {
		t.Errorf("Modules (-want +got):\n%s", diff)
	}
}

func TestDecodeCasesErrors(t *testing.T) {
	for in, want := range map[string]string{
		"{\"id\":\"a\"}\n{\"id\":\"a\"}\n": "line 2: case a appears twice",
		"\n{\"repo\":\"x\"}\n":             "line 2: case without an id",
		"{\"id\":\"a\",\"ground_truth\":{\"files\":{\"x\":{\"ranges\":[1]}}}}": "line 1:",
	} {
		_, err := DecodeCases(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeCases(%q) error = %v, want %q", in, err, want)
		}
	}
}
