package extract_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch/extract"
)

// TestDevMalformed extracts every patch of the shared malformed corpus.
// A "fenced" patch is git's diff wrapped in fences, tags and prose: the
// extracted text must be that diff exactly. Every other family is a bare
// (damaged) diff: extraction must give it back unchanged, since repairing
// it is not extraction's job.
func TestDevMalformed(t *testing.T) {
	rows := testdata.Load[testdata.Malformed](t, "malformed-dev.jsonl.gz")
	triples := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	udiff := map[string]string{}
	for _, r := range triples {
		udiff[r.ID] = r.UDiff
	}
	fenced := 0
	for _, r := range rows {
		res, err := extract.Extract(r.Patch)
		if err != nil {
			t.Errorf("%s: %v", r.ID, err)
			continue
		}
		want := r.Patch
		if r.Family == "fenced" {
			base, _, _ := strings.Cut(r.ID, "#")
			var ok bool
			if want, ok = udiff[base]; !ok {
				t.Errorf("%s: no dev triple %s", r.ID, base)
				continue
			}
			fenced++
		} else if strings.Contains(r.Family, "fenced") {
			continue // fenced and damaged: nothing exact to compare with
		}
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if diff := cmp.Diff(want, res.Text); diff != "" {
			t.Errorf("%s (%s): extracted text differs (-want +got):\n%s\nsource: %s", r.ID, r.Family, diff, res.Source)
		}
	}
	if fenced == 0 {
		t.Error("no fenced cases in the corpus")
	}
}
