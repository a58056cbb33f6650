package patch_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// TestManyHunksGit applies git's own diffs with many hunks, in their order
// and with the hunks reversed or shuffled, strictly by git's rules, and
// compares with git apply: the same bytes, or both refuse. The files have
// few distinct lines, so that hunks fit at several places and the rule
// that a hunk is not matched against lines earlier hunks wrote decides.
func TestManyHunksGit(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	if _, err := gittest.Run(t, dir, "", "init", "-q"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(33, 4))
	alphabet := []string{"}", "", "\treturn nil", "x := 1", "if err != nil {", "a", "b"}
	for c := 0; c < 40; c++ {
		n := 40 + rng.IntN(200)
		var old, new strings.Builder
		for i := 0; i < n; i++ {
			l := alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(3) == 0 {
				l = fmt.Sprintf("line %d", i)
			}
			old.WriteString(l + "\n")
			switch rng.IntN(12) {
			case 0: // deleted
			case 1:
				new.WriteString(alphabet[rng.IntN(len(alphabet))] + "\n" + l + "\n")
			case 2:
				new.WriteString(fmt.Sprintf("changed %d\n", i))
			default:
				new.WriteString(l + "\n")
			}
		}
		oldPath, newPath := filepath.Join(dir, "old"), filepath.Join(dir, "new")
		os.WriteFile(oldPath, []byte(old.String()), 0o644)
		os.WriteFile(newPath, []byte(new.String()), 0o644)
		ctx := 1 + c%3
		diff, _ := gittest.Run(t, dir, "", "diff", "--no-index", fmt.Sprintf("-U%d", ctx), "--", "old", "new")
		if diff == "" {
			continue
		}
		diff = strings.ReplaceAll(diff, "a/old", "a/f")
		diff = strings.ReplaceAll(diff, "b/new", "b/f")
		head, hunks := splitHunks(diff)
		orders := map[string][]string{"in order": hunks}
		orders["reversed"] = slices.Clone(hunks)
		slices.Reverse(orders["reversed"])
		shuffled := slices.Clone(hunks)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		orders["shuffled"] = shuffled
		for name, hs := range orders {
			text := head + strings.Join(hs, "")
			want, gerr := gitApply(t, dir, old.String(), text)
			got, err := strictApply(old.String(), text)
			if (err == nil) != (gerr == nil) || got != want {
				t.Errorf("case %d (-U%d, %d hunks, %s): ours: %v, git apply: %v; same result: %v\n%s", c, ctx, len(hs), name, err, gerr, got == want, text)
			}
			if name == "in order" && err == nil && got != new.String() {
				t.Errorf("case %d: git's diff in order does not give the new file", c)
			}
		}
	}
}

// TestManyHunksGitLarge: a diff of 20,000 hunks gives what git apply
// gives.
func TestManyHunksGitLarge(t *testing.T) {
	gittest.Need(t)
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	if _, err := gittest.Run(t, dir, "", "init", "-q"); err != nil {
		t.Fatal(err)
	}
	old, new, diff := testdata.ManyHunks(20000)
	want, gerr := gitApply(t, dir, old, diff)
	if gerr != nil {
		t.Fatal(gerr)
	}
	got, err := strictApply(old, diff)
	if err != nil || got != want || got != new {
		t.Fatalf("apply: %v; same as git apply: %v", err, got == want)
	}
}

func splitHunks(diff string) (head string, hunks []string) {
	i := strings.Index(diff, "\n@@ ") + 1
	head = diff[:i]
	for _, h := range strings.SplitAfter(diff[i:], "\n") {
		if strings.HasPrefix(h, "@@ ") || len(hunks) == 0 {
			hunks = append(hunks, "")
		}
		hunks[len(hunks)-1] += h
	}
	return head, hunks
}

func strictApply(old, text string) (string, error) {
	p, err := patch.ParseUDiff(text, patch.DefaultParseOptions)
	if err != nil {
		return "", err
	}
	res, err := patch.Apply(p, patch.MapFS{"f": old}, patch.ApplyOptions{Git: true})
	if err != nil {
		return "", err
	}
	return string(res[0].Content), nil
}

// gitApply applies text to a file f holding old with git apply and returns
// the new content.
func gitApply(t *testing.T, dir, old, text string) (string, error) {
	t.Helper()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gittest.Run(t, dir, text, "apply", "-"); err != nil {
		return "", err
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}
