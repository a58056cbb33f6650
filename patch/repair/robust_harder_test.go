package repair_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// degrade2 drops or alters a context line, then applies degrade's damage:
// the edits carry less certainty, and must still never land in the wrong
// place.
func degrade2(r *rand.Rand, text string, f patch.Format) (string, []string) {
	var did []string
	lines := strings.Split(text, "\n")
	var ctx []int
	for i, l := range lines {
		if i > 0 && i+1 < len(lines) && strings.HasPrefix(l, " ") && strings.HasPrefix(lines[i-1], " ") && strings.HasPrefix(lines[i+1], " ") {
			ctx = append(ctx, i)
		}
	}
	// Search-replace has no context lines: changing its lines changes the
	// edit itself.
	if f != patch.SearchReplace && len(ctx) > 0 {
		switch k := ctx[r.Intn(len(ctx))]; r.Intn(3) {
		case 0:
			lines = append(lines[:k], lines[k+1:]...)
			did = append(did, "drop-ctx")
		case 1:
			if len(strings.TrimSpace(lines[k])) > 10 {
				lines[k] += " // note"
				did = append(did, "paraphrase")
			}
		}
	}
	out, more := degrade(r, strings.Join(lines, "\n"), f)
	return out, append(did, more...)
}

// TestRobustnessHarder is TestRobustness with context lines dropped or
// altered as well.
func TestRobustnessHarder(t *testing.T) {
	tried, recovered := robustness(t, degrade2, 99)
	t.Logf("%d patches with context dropped or altered: %d recovered, %d refused (a misapply fails the test)", tried, recovered, tried-recovered)
	// Refusing an edit whose context no longer pins it down is right; the
	// floor only guards against refusing everything.
	if recovered*10 < tried*8 {
		t.Errorf("recovered %d of %d, below 80%%", recovered, tried)
	}
}
