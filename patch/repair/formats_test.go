package repair_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

var (
	updateFormats = flag.Bool("update-formats", false, "rewrite testdata/formats.jsonl.gz from ../shared/data/diffxyz-dev.jsonl.gz")
	dumpFormats   = flag.String("dump-formats", "", "write every generated formats case to this JSONL file, for applybench")
)

const formatsFile = "testdata/formats.jsonl.gz"

// formatsOutcome applies c in memory as `patchbench apply` does (no
// target: a V4A envelope goes by codex's rules first) and as applybench
// does (the case's file as target), and returns the outcome of each.
func formatsOutcome(c applybench.Case) [2]string {
	var out [2]string
	for i, target := range []string{"", c.Path} {
		res, err := repair.Repair(c.Patch, repair.Options{Target: target, FS: patch.MapFS{c.Path: c.OldCode}})
		switch {
		case err != nil && len(res.Results) > 0:
			out[i] = applybench.Damaged
		case err != nil:
			out[i] = applybench.Refused
		case c.Expected == nil:
			out[i] = applybench.FalseApply
		default:
			got := c.OldCode
			for _, r := range res.Results {
				if r.Path == c.Path {
					got = string(r.Content)
				} else {
					got = "\x00wrote " + r.Path
				}
			}
			if got == *c.Expected || (i == 0 && c.Family == "v4a_noeol_unmarked" && got == *c.Expected+"\n") {
				// Without a target a V4A envelope goes by codex's rules,
				// which give a file a chunk reaches the end of a final
				// newline (scenario 014).

				out[i] = applybench.Recovered
			} else {
				out[i] = applybench.FalseApply
			}
		}
	}
	return out
}

// checkFormats runs every case both ways and fails on a false apply, a
// damaged file or a must-refuse case applied; it logs per-family counts.
func checkFormats(t *testing.T, cases []applybench.Case) {
	type count struct{ n, recovered, refused, mustRefuse int }
	fams := map[string]*count{}
	var names []string
	total := count{}
	recovered := map[string]bool{}
	for _, c := range cases {
		k := fams[c.Family]
		if k == nil {
			k = &count{}
			fams[c.Family] = k
			names = append(names, c.Family)
		}
		k.n++
		total.n++
		if c.Expected == nil {
			k.mustRefuse++
			total.mustRefuse++
		}
		o := formatsOutcome(c)
		recovered[c.ID] = o[0] == applybench.Recovered || o[1] == applybench.Recovered
		for i, way := range []string{"apply", "target"} {
			switch o[i] {
			case applybench.FalseApply, applybench.Damaged:
				t.Errorf("%s (%s): %s", c.ID, way, o[i])
			}
		}
		if o[0] != o[1] {
			t.Logf("%s: %s without a target, %s with one", c.ID, o[0], o[1])
		}
		switch o[1] {
		case applybench.Recovered:
			k.recovered++
			total.recovered++
		case applybench.Refused:
			k.refused++
			total.refused++
		}
	}
	checkTwice(t, cases, recovered)
	slices.Sort(names)
	for _, f := range names {
		k := fams[f]
		if k.mustRefuse > 0 {
			t.Logf("%-30s %3d cases: recovered %d/%d, must-refuse refused %d/%d", f, k.n, k.recovered, k.n-k.mustRefuse, k.refused-(k.n-k.mustRefuse-k.recovered), k.mustRefuse)
		} else {
			t.Logf("%-30s %3d cases: recovered %d/%d", f, k.n, k.recovered, k.n)
		}
	}
	t.Logf("all: %d cases, recovered %d/%d, %d must refuse", total.n, total.recovered, total.n-total.mustRefuse, total.mustRefuse)
}

// TestFormatsRedTeam generates the red-team cases for search-replace, V4A,
// udiff-h and udiff-l from every dev commit (formatsCases) and checks that
// none is misapplied, none damages its file and every must-refuse case is
// refused. It skips without ../shared/data.
func TestFormatsRedTeam(t *testing.T) {
	rows := testdata.LoadShared[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	cases := formatsCases(rows, 60)
	cases = append(cases, docCases(t, rows, answerPerFamily)...)
	if *dumpFormats != "" {
		writeCases(t, *dumpFormats, cases, false)
	}
	if *updateFormats {
		writeCases(t, formatsFile, telling(cases), true)
	}
	checkFormats(t, cases)
}

// TestFormatsCorpus runs the shipped sample of those cases, so that a bare
// clone checks them too.
func TestFormatsCorpus(t *testing.T) {
	cases, err := applybench.LoadCases(formatsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("%s holds %d cases", formatsFile, len(cases))
	}
	checkFormats(t, cases)
}

// telling keeps a few cases of each family, must-refuse ones first and
// small files first, for the shipped corpus.
func telling(cases []applybench.Case) []applybench.Case {
	by := map[string][]applybench.Case{}
	var fams []string
	for _, c := range cases {
		if by[c.Family] == nil {
			fams = append(fams, c.Family)
		}
		by[c.Family] = append(by[c.Family], c)
	}
	var out []applybench.Case
	for _, f := range fams {
		cs := by[f]
		slices.SortStableFunc(cs, func(a, b applybench.Case) int { return len(a.OldCode) - len(b.OldCode) })
		keep := 4
		if cs[0].Expected == nil || strings.Contains(f, "twin") || strings.Contains(f, "twice") || strings.Contains(f, "dup") {
			keep = 8
		}
		out = append(out, cs[:min(keep, len(cs))]...)
	}
	return out
}

func writeCases(t *testing.T, name string, cases []applybench.Case, gz bool) {
	t.Helper()
	var b bytes.Buffer
	for _, c := range cases {
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	data := b.Bytes()
	if gz {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data = z.Bytes()
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d cases to %s (%d bytes)", len(cases), name, len(data))
}
