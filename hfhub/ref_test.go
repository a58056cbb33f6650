package hfhub

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
		ok   bool
	}{
		{"princeton-nlp/SWE-bench_Lite", Ref{Repo: "princeton-nlp/SWE-bench_Lite"}, true},
		{"princeton-nlp/SWE-bench_Verified:test", Ref{Repo: "princeton-nlp/SWE-bench_Verified", Split: "test"}, true},
		{"JetBrains-Research/diff-xyz@v1.0:test", Ref{Repo: "JetBrains-Research/diff-xyz", Revision: "v1.0", Split: "test"}, true},
		{"a/b@refs/convert/parquet:default/train", Ref{Repo: "a/b", Revision: "refs/convert/parquet", Split: "default/train"}, true},
		{"a/b@" + "0123456789abcdef0123456789abcdef01234567", Ref{Repo: "a/b", Revision: "0123456789abcdef0123456789abcdef01234567"}, true},
		{"a", Ref{}, false},
		{"a/b/c", Ref{}, false},
		{"/abs/path", Ref{}, false},
		{"../a/b", Ref{}, false},
		{"a/b:..", Ref{}, false},
		{"a/b@x/../y", Ref{}, false},
		{"a/b:x/y/z", Ref{}, false},
		{"a/.b", Ref{}, false},
		{"a/b@", Ref{}, false},
	} {
		got, err := ParseRef(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseRef(%q) error %v; want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseRef(%q) (-want +got):\n%s", tc.in, diff)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("ParseRef(%q).String() = %q", tc.in, got.String())
		}
	}
}

func TestLooksLikeRef(t *testing.T) {
	for in, want := range map[string]bool{
		"princeton-nlp/SWE-bench_Lite": true,
		"data/test.jsonl":              false,
		"data/lite.parquet":            false,
		"out/ds.json.gz":               false,
		"czlll/Loc-Bench_V1":           true,
		"dataset.jsonl":                false,
	} {
		if got := LooksLikeRef(in); got != want {
			t.Errorf("LooksLikeRef(%q) = %v", in, got)
		}
	}
}

func TestSplitOf(t *testing.T) {
	for _, tc := range []struct {
		name      string
		converted bool
		want      string
	}{
		{"data/test-00000-of-00001.parquet", false, "test"},
		{"data/dev-00000-of-00001.parquet", false, "dev"},
		{"data/train-00003-of-00010-5f2c8a.parquet", false, "train"},
		{"lite/test-00000-of-00001.parquet", false, "lite/test"},
		{"test.parquet", false, "test"},
		{"ape_bench1_test.parquet", false, "test"},
		{"ape_bench1_valid.parquet", false, "validation"},
		{"ape_bench1_train.parquet", false, "train"},
		{"records.parquet", false, "records"},
		{"data/records.parquet", false, "records"},
		{"data/ape_test.parquet", false, "test"},
		{"data/test/part0.parquet", false, "test"},
		{"README.md", false, ""},
		{".cache/x-00000-of-00001.parquet", false, ""},
		{"default/test/0000.parquet", true, "test"},
		{"default/partial-train/0000.parquet", true, "train"},
		{"python/test/0000.parquet", true, "python/test"},
		{"test/0000.parquet", true, ""},
	} {
		if got := splitOf(tc.name, tc.converted); got != tc.want {
			t.Errorf("splitOf(%q, %v) = %q; want %q", tc.name, tc.converted, got, tc.want)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"a/b", "a/b@main:test", "a/b@refs/pr/1:c/d", "a/b:..", "../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		// What parses prints back as it was, and names no path outside.
		if r.String() != s {
			t.Fatalf("ParseRef(%q).String() = %q", s, r.String())
		}
		for _, part := range []string{r.Repo, r.Split} {
			if part == ".." || len(part) > 0 && (part[0] == '/' || part[0] == '.') {
				t.Fatalf("ParseRef(%q): part %q", s, part)
			}
		}
		if splitOf(r.Split+".parquet", false) == "" && r.Split != "" && splitOf(r.Split+"/x.parquet", false) == "" {
			t.Fatalf("ParseRef(%q): split %q names no split", s, r.Split)
		}
	})
}
