package swe_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/patchbench/patchbench/bench/swe"
)

// hfRow is a dataset row as Hugging Face's SWE-bench Parquet files hold it:
// the test lists are JSON-encoded strings.
type hfRow struct {
	InstanceID string `parquet:"instance_id"`
	Repo       string `parquet:"repo"`
	BaseCommit string `parquet:"base_commit"`
	Patch      string `parquet:"patch"`
	TestPatch  string `parquet:"test_patch"`
	FailToPass string `parquet:"FAIL_TO_PASS"`
	PassToPass string `parquet:"PASS_TO_PASS"`
	Version    string `parquet:"version"`
}

// listRow has the test lists as lists.
type listRow struct {
	InstanceID string   `parquet:"instance_id"`
	Repo       string   `parquet:"repo"`
	BaseCommit string   `parquet:"base_commit"`
	FailToPass []string `parquet:"FAIL_TO_PASS,list"`
	PassToPass []string `parquet:"PASS_TO_PASS,list"`
	TestCmd    string   `parquet:"test_cmd"`
}

func TestLoadDataset(t *testing.T) {
	dir := t.TempDir()
	want := []swe.Instance{
		{InstanceID: "a__b-1", Repo: "a/b", BaseCommit: "abc", Patch: "p", TestPatch: "tp",
			FailToPass: []string{"tests/test_x.py::test_y"}, PassToPass: []string{"tests/test_x.py::test_z[a - b]"}, Version: "1.0"},
		{InstanceID: "a__b-2", Repo: "a/b", BaseCommit: "def", FailToPass: []string{"TestX"}, PassToPass: []string{}},
	}
	hf := filepath.Join(dir, "hf.parquet")
	if err := parquet.WriteFile(hf, []hfRow{
		{"a__b-1", "a/b", "abc", "p", "tp", `["tests/test_x.py::test_y"]`, `["tests/test_x.py::test_z[a - b]"]`, "1.0"},
		{"a__b-2", "a/b", "def", "", "", `["TestX"]`, `[]`, ""},
	}); err != nil {
		t.Fatal(err)
	}
	lists := filepath.Join(dir, "lists.parquet")
	if err := parquet.WriteFile(lists, []listRow{{"a__b-3", "a/b", "123", []string{"TestA", "TestB"}, nil, "go test -run {tests_regex}"}}); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(dir, "d.jsonl")
	os.WriteFile(jsonl, []byte(`{"instance_id":"a__b-1","repo":"a/b","base_commit":"abc","patch":"p","test_patch":"tp","FAIL_TO_PASS":["tests/test_x.py::test_y"],"PASS_TO_PASS":"[\"tests/test_x.py::test_z[a - b]\"]","version":"1.0"}
{"instance_id":"a__b-2","repo":"a/b","base_commit":"def","FAIL_TO_PASS":"[\"TestX\"]","PASS_TO_PASS":[],"extra":{"x":1}}
`), 0o644)
	array := filepath.Join(dir, "d.json")
	os.WriteFile(array, []byte(`[{"instance_id":"a__b-1","repo":"a/b","base_commit":"abc","patch":"p","test_patch":"tp","FAIL_TO_PASS":["tests/test_x.py::test_y"],"PASS_TO_PASS":["tests/test_x.py::test_z[a - b]"],"version":"1.0"},
 {"instance_id":"a__b-2","repo":"a/b","base_commit":"def","FAIL_TO_PASS":["TestX"],"PASS_TO_PASS":[]}]`), 0o644)
	for _, p := range []string{hf, jsonl, array} {
		got, err := swe.LoadDataset(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", p, diff)
		}
	}
	got, err := swe.LoadDataset(lists)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !cmp.Equal(got[0].FailToPass, []string{"TestA", "TestB"}) || len(got[0].PassToPass) != 0 || got[0].TestCmd != "go test -run {tests_regex}" {
		t.Errorf("lists.parquet: %+v", got)
	}

	for name, content := range map[string]string{
		"dup.jsonl":     `{"instance_id":"x","repo":"a/b","base_commit":"c"}` + "\n" + `{"instance_id":"x","repo":"a/b","base_commit":"c"}`,
		"norepo.jsonl":  `{"instance_id":"x","base_commit":"c"}`,
		"badlist.jsonl": `{"instance_id":"x","repo":"a/b","base_commit":"c","FAIL_TO_PASS":"not json"}`,
		"broken.jsonl":  `{"instance_id":"x",`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := swe.LoadDataset(p); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func TestLoadPredictions(t *testing.T) {
	dir := t.TempDir()
	patch := "diff"
	want := []swe.Prediction{
		{InstanceID: "a", Model: "m", ModelPatch: &patch},
		{InstanceID: "b", Model: "m", ModelPatch: nil, FullOutput: "text"},
	}
	files := map[string]string{
		"p.jsonl": `{"instance_id":"a","model_name_or_path":"m","model_patch":"diff"}` + "\n\n" +
			`{"instance_id":"b","model_name_or_path":"m","model_patch":null,"full_output":"text"}` + "\n",
		"p.json":   `[{"instance_id":"a","model_name_or_path":"m","model_patch":"diff"},{"instance_id":"b","model_name_or_path":"m","full_output":"text"}]`,
		"d.json":   `{"b":{"model_name_or_path":"m","model_patch":null,"full_output":"text"},"a":{"instance_id":"a","model_name_or_path":"m","model_patch":"diff"}}`,
		"one.json": `{"instance_id":"a","model_name_or_path":"m","model_patch":"diff"}`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		got, err := swe.LoadPredictions(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := want
		if name == "one.json" {
			w = want[:1]
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	p := filepath.Join(dir, "dup.jsonl")
	os.WriteFile(p, []byte(`{"instance_id":"a"}`+"\n"+`{"instance_id":"a"}`), 0o644)
	if _, err := swe.LoadPredictions(p); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate ids: %v", err)
	}
}
