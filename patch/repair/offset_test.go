package repair_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/gittest"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// gitOffsets runs git apply -v --check on diff in dir and returns the
// offset git reports for each hunk (0 where it reports none).
func gitOffsets(t *testing.T, dir, diff string, hunks int) []int {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "apply", "-v", "--check", "-")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.Stdin = strings.NewReader(diff)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("git apply: %v: %s", err, out.String())
	}
	offs := make([]int, hunks)
	re := regexp.MustCompile(`Hunk #(\d+) succeeded at \d+ \(offset (-?\d+) lines?\)`)
	for _, m := range re.FindAllStringSubmatch(out.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		o, _ := strconv.Atoi(m[2])
		offs[n-1] = o
	}
	return offs
}

// Issue 38 item 4: a hunk's offset is its line minus the line the patch
// gave, as git apply -v reports it, also when the header points past the
// end of the file (the search starts from the end; the offset does not).
func TestOffsetAsGitReports(t *testing.T) {
	gittest.Need(t)
	var file strings.Builder
	for i := 1; i <= 11; i++ {
		fmt.Fprintf(&file, "line %d\n", i)
	}
	body1 := " line 3\n line 4\n line 5\n-line 6\n+LINE 6\n line 7\n line 8\n line 9\n"
	body2 := " line 9\n line 10\n-line 11\n+LINE 11\n"
	for _, c := range []struct {
		name, hunks string
		want        []int
	}{
		{"past the end", "@@ -40,7 +40,7 @@\n" + body1, []int{-37}},
		{"just past the end", "@@ -12,7 +12,7 @@\n" + body1, []int{-9}},
		{"before", "@@ -2,7 +2,7 @@\n" + body1, []int{1}},
		{"as given", "@@ -3,7 +3,7 @@\n" + body1, []int{0}},
		{"two hunks, the second past the end", "@@ -3,6 +3,6 @@\n" + body1[:len(body1)-len(" line 9\n")] + "@@ -90,3 +90,3 @@\n" + body2, []int{0, -81}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(file.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Run(t, dir, "", "init", "-q")
			diff := "--- a/f.txt\n+++ b/f.txt\n" + c.hunks
			got := gitOffsets(t, dir, diff, len(c.want))
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("git apply -v reports offsets %v, the table says %v", got, c.want)
			}
			fsys := patch.MapFS{"f.txt": file.String()}
			res, err := repair.Repair(diff, repair.Options{FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			var ours []int
			for _, h := range res.Files[0].Hunks {
				ours = append(ours, h.Offset)
			}
			if fmt.Sprint(ours) != fmt.Sprint(got) {
				t.Errorf("offsets %v, git apply -v says %v", ours, got)
			}
			// The pipeline (counts that do not fit the body send the
			// patch there) measures from the same line.
			loose := strings.Replace(diff, ",7 +", ",9 +", 1)
			if loose != diff {
				res, err := repair.Repair(loose, repair.Options{FS: fsys})
				if err != nil {
					t.Fatal(err)
				}
				if h := res.Files[0].Hunks[0]; h.Offset != got[0] {
					t.Errorf("pipeline: offset %d, git apply -v says %d for the patch with its counts right", h.Offset, got[0])
				}
			}
		})
	}
}
