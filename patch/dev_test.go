package patch_test

import (
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// TestDevTriples checks, for every dev commit, that git's own diff applies
// forwards and backwards, and that our diff in every format round-trips.
func TestDevTriples(t *testing.T) {
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	for _, r := range rows {
		p, err := patch.ParseUDiff(r.UDiff, patch.DefaultParseOptions)
		if err != nil {
			t.Errorf("%s: parse: %v", r.ID, err)
			continue
		}
		got, _, err := patch.ApplyFile(r.OldCode, p.Files[0], patch.ApplyOptions{})
		if err != nil || got != r.NewCode {
			t.Errorf("%s: apply git's udiff: err=%v equal=%v", r.ID, err, got == r.NewCode)
		}
		back, _, err := patch.ApplyFile(r.NewCode, p.Files[0], patch.ApplyOptions{Reverse: true})
		if err != nil || back != r.OldCode {
			t.Errorf("%s: reverse git's udiff: err=%v equal=%v", r.ID, err, back == r.OldCode)
		}
		for _, f := range []patch.Format{patch.UDiff, patch.UDiffH, patch.UDiffL} {
			opts := patch.DefaultMakeOptions()
			opts.Unique = !f.HasPositions()
			fp := patch.Make(r.Path, r.Path, r.OldCode, r.NewCode, opts)
			text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, f)
			if err != nil {
				t.Errorf("%s: print %s: %v", r.ID, f, err)
				continue
			}
			q, err := patch.Parse(text, f, patch.DefaultParseOptions)
			if err != nil {
				t.Errorf("%s: parse %s: %v\n%s", r.ID, f, err, text)
				continue
			}
			got, _, err := patch.ApplyFile(r.OldCode, q.Files[0], patch.ApplyOptions{})
			if err != nil || got != r.NewCode {
				t.Errorf("%s: round trip %s: err=%v equal=%v", r.ID, f, err, got == r.NewCode)
			}
		}
	}
}
