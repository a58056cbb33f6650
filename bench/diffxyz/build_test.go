package diffxyz

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
)

// testRepo is a git repository in a temporary directory, with commits at
// fixed dates (so fixed hashes, and a fixed order for each seed).
type testRepo struct {
	t   *testing.T
	dir string
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &testRepo{t, t.TempDir()}
	r.run("init", "-q")
	return r
}

func (r *testRepo) run(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_DATE=2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2020-01-01T00:00:00Z")
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (r *testRepo) write(name string, lines []string) {
	r.t.Helper()
	path := filepath.Join(r.dir, name)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) commit(msg string) {
	r.t.Helper()
	r.run("add", "-A")
	r.run("commit", "-q", "-m", msg)
}

// gitRepo makes a repository whose history holds commits that pass the
// filter in each size class, and commits that must not: several files,
// a short file, a whitespace-only change, another language, a new file.
func gitRepo(t *testing.T) string {
	t.Helper()
	repo := newTestRepo(t)
	dir, write, commit := repo.dir, repo.write, repo.commit
	file := func(n int, tag string) []string {
		var lines []string
		for i := range n {
			lines = append(lines, fmt.Sprintf("x%d = %d  # %s", i, i, tag))
		}
		return lines
	}
	py := file(100, "base")
	write("app/main.py", py)
	write("short.py", file(10, "short"))
	write("lib.go", file(60, "go"))
	commit("initial")
	// Replacing k lines changes 2k (k removed, k added).
	change := func(k int, tag string) {
		for i := range k {
			py[(i*7+len(tag))%100] = fmt.Sprintf("y%d = %q", i, tag)
		}
		write("app/main.py", py)
		commit(tag)
	}
	for i := range 6 {
		change(1+i%3, fmt.Sprintf("small%d", i)) // 2 to 6 changed lines
	}
	for i := range 4 {
		change(6+i, fmt.Sprintf("medium%d", i)) // 12 to 18
	}
	for i := range 3 {
		change(20+i, fmt.Sprintf("large%d", i)) // 40 to 44
	}
	// Refused: two files at once.
	py[0] = "two = 'files'"
	write("app/main.py", py)
	write("lib.go", file(60, "go2"))
	commit("two files")
	// Refused: a short file.
	write("short.py", file(12, "short"))
	commit("short")
	// Refused: whitespace only.
	py[5] = "   " + py[5] + "  "
	write("app/main.py", py)
	commit("whitespace")
	// Another language (refused with --lang python).
	write("lib.go", file(61, "go3"))
	commit("go")
	// Refused: a new file.
	write("app/new.py", file(50, "new"))
	commit("new file")
	return dir
}

func TestBuild(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	rows, st, err := Build(ctx, BuildOptions{Repo: dir, Lang: "python", N: 10, Seed: 1, Name: "toy"})
	if err != nil {
		t.Fatal(err)
	}
	// 10 rows: 4 small, 4 medium, 2 large.
	if st.Selected[Small] != 4 || st.Selected[Medium] != 4 || st.Selected[Large] != 2 || len(rows) != 10 {
		t.Errorf("selected %v (%d rows), want 4/4/2", st.Selected, len(rows))
	}
	for _, r := range rows {
		if r.Path != "app/main.py" || r.Lang != "python" || r.Repo != "toy" || !strings.HasPrefix(r.ID, "toy@") {
			t.Errorf("row %s: path %s lang %s repo %s", r.ID, r.Path, r.Lang, r.Repo)
		}
		if !strings.HasPrefix(r.Message, "small") && !strings.HasPrefix(r.Message, "medium") && !strings.HasPrefix(r.Message, "large") {
			t.Errorf("row %s: commit %q should have been filtered out", r.ID, r.Message)
		}
		if r.SizeClass != SizeClassOf(r.NAdded+r.NRemoved) || !strings.HasPrefix(r.Message, r.SizeClass) {
			t.Errorf("row %s (%s): size class %s for +%d -%d", r.ID, r.Message, r.SizeClass, r.NAdded, r.NRemoved)
		}
		// git's diff applies strictly and is counted right.
		p, err := patch.Parse(r.UDiff, patch.UDiff, patch.DefaultParseOptions)
		if err != nil {
			t.Fatalf("row %s: %v", r.ID, err)
		}
		got, _, err := patch.ApplyFile(r.OldCode, p.Files[0], patch.ApplyOptions{})
		if err != nil || got != r.NewCode {
			t.Errorf("row %s: git's diff does not give new_code: %v", r.ID, err)
		}
		if r.NHunks != len(p.Files[0].Hunks) {
			t.Errorf("row %s: n_hunks %d, diff has %d", r.ID, r.NHunks, len(p.Files[0].Hunks))
		}
	}
	// The same seed builds the same dataset; another seed picks other
	// small and medium commits.
	again, _, err := Build(ctx, BuildOptions{Repo: dir, Lang: "python", N: 10, Seed: 1, Name: "toy"})
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := Build(ctx, BuildOptions{Repo: dir, Lang: "python", N: 10, Seed: 2, Name: "toy"})
	ids := func(rs []*Row) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID)
		}
		return strings.Join(s, " ")
	}
	if ids(again) != ids(rows) {
		t.Error("the same seed built another dataset")
	}
	if ids(other) == ids(rows) {
		t.Error("another seed built the same dataset")
	}
	// A class that runs short makes a smaller dataset.
	rows, st, err = Build(ctx, BuildOptions{Repo: dir, Lang: "python", N: 100})
	if err != nil {
		t.Fatal(err)
	}
	if st.Selected[Large] != 3 || st.Selected[Small] != 6 || st.Selected[Medium] != 4 || len(rows) != 13 {
		t.Errorf("selected %v, want every candidate 6/4/3", st.Selected)
	}
	// Every candidate was examined: the refused ones are counted.
	if st.Rejected["whitespace-only change"] != 1 || st.Rejected["not in the parent commit"] != 1 ||
		st.Rejected["fewer than 40 or more than 1000 lines"] != 1 {
		t.Errorf("rejected %v: want the whitespace-only change, the new file and the short file", st.Rejected)
	}
	// Every language: the go commit (60 → 61 lines, one file) joins.
	rows, _, err = Build(ctx, BuildOptions{Repo: dir, N: 100})
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]int{}
	for _, r := range rows {
		langs[r.Lang]++
	}
	if langs["go"] != 1 || langs["python"] != 13 {
		t.Errorf("languages %v", langs)
	}
	if _, _, err := Build(ctx, BuildOptions{Repo: dir, Lang: "cobol", N: 1}); err == nil {
		t.Error("unknown language: no error")
	}
	if _, _, err := Build(ctx, BuildOptions{Repo: t.TempDir(), N: 1}); err == nil {
		t.Error("not a repository: no error")
	}
}

// TestBuildFiltersAndKinds: vendored, minified, generated and binary files
// are refused whatever their edit, and each row records its change kind.
func TestBuildFiltersAndKinds(t *testing.T) {
	r := newTestRepo(t)
	lines := func(n int, tag string) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("x%d = %d  # %s", i, i, tag))
		}
		return out
	}
	long := func(n int) []string { // a minified file: few, long lines
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("var a%d=%s;", i, strings.Repeat("1+", 150)))
		}
		return out
	}
	gen := append([]string{"# Code generated by protoc-gen-py. DO NOT EDIT."}, lines(59, "gen")...)
	paths := map[string][]string{
		"app/main.py": lines(60, "main"), "vendor/lib/a.py": lines(60, "v"), "third_party/b.py": lines(60, "tp"),
		"web/node_modules/x/index.js": lines(60, "nm"), "web/app.min.js": lines(60, "min"), "web/bundle.js": long(60),
		"app/pb2.py": gen,
	}
	for p, l := range paths {
		r.write(p, l)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "app/blob.py"), []byte("\x00\x01binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.commit("initial")
	// One edit of each refused file, one commit each.
	for _, p := range []string{"vendor/lib/a.py", "third_party/b.py", "web/node_modules/x/index.js", "web/app.min.js", "web/bundle.js", "app/pb2.py"} {
		l := paths[p]
		l[10] = "changed = True"
		r.write(p, l)
		r.commit("refused " + p)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "app/blob.py"), []byte("\x00\x02binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.commit("refused binary")
	// The three change kinds on app/main.py.
	main := paths["app/main.py"]
	main[3] = "y = 3"
	r.write("app/main.py", main)
	r.commit("add+delete")
	main = append(main[:20:20], append([]string{"z1 = 1", "z2 = 2"}, main[20:]...)...)
	r.write("app/main.py", main)
	r.commit("add-only")
	main = append(main[:40:40], main[41:]...)
	r.write("app/main.py", main)
	r.commit("delete-only")

	rows, st, err := Build(context.Background(), BuildOptions{Repo: r.dir, N: 100})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, row := range rows {
		kinds[row.Message] = row.ChangeKind
		if row.Path != "app/main.py" || row.NHunks != 1 {
			t.Errorf("row %s (%s): path %s, %d hunks", row.ID, row.Message, row.Path, row.NHunks)
		}
	}
	if want := map[string]string{"add+delete": AddDelete, "add-only": AddOnly, "delete-only": DeleteOnly}; !maps.Equal(kinds, want) {
		t.Errorf("rows by message and kind %v, want %v", kinds, want)
	}
	if want := map[string]int{AddDelete: 1, AddOnly: 1, DeleteOnly: 1}; !maps.Equal(st.Kinds, want) {
		t.Errorf("kinds %v, want %v", st.Kinds, want)
	}
	want := map[string]int{RejectVendored: 3, RejectMinified: 2, RejectGenerated: 1, RejectBinary: 1}
	if !maps.Equal(st.Rejected, want) {
		t.Errorf("rejected %v, want %v", st.Rejected, want)
	}
}

func TestChangeKindOf(t *testing.T) {
	for _, tt := range []struct {
		added, removed int
		want           string
	}{{1, 1, AddDelete}, {3, 0, AddOnly}, {0, 2, DeleteOnly}, {0, 0, ""}} {
		if got := ChangeKindOf(tt.added, tt.removed); got != tt.want {
			t.Errorf("ChangeKindOf(%d, %d) = %q, want %q", tt.added, tt.removed, got, tt.want)
		}
	}
}

// TestContentRejection: the head lines of real files, generated or not.
func TestContentRejection(t *testing.T) {
	body := strings.Repeat("x = 1\n", 40)
	for _, tt := range []struct {
		head, want string
	}{
		{"// Code generated by protoc-gen-go. DO NOT EDIT.\n", RejectGenerated},
		{"# Generated by the protocol buffer compiler.  DO NOT EDIT!\n", RejectGenerated},
		{"// @generated by cargo-something\n", RejectGenerated},
		{"// <auto-generated>\n//     This code was generated by a tool.\n", RejectGenerated},
		{"/* This file was automatically generated by lexgen. */\n", RejectGenerated},
		// click's docs/conf.py (Sphinx): hand-edited, not generated.
		{"# Note that not all possible configuration values are present in this\n# autogenerated file.\n", ""},
		{"\"\"\"Utilities for generated help pages.\"\"\"\n", ""},
		{"", ""},
	} {
		if got := contentRejection([]byte(tt.head + body)); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.head, got, tt.want)
		}
	}
	// A marker below the head is code, not a marker.
	if got := contentRejection([]byte(body + "# DO NOT EDIT below\n")); got != "" {
		t.Errorf("marker at line 41: %q", got)
	}
	if got := contentRejection([]byte(strings.Repeat("var a="+strings.Repeat("1+", 120)+"1;\n", 3))); got != RejectMinified {
		t.Errorf("long lines: %q, want %q", got, RejectMinified)
	}
}

// TestBuildHunkStrata: within a size class half the rows are single-hunk
// and half multi-hunk, whatever order the seed gives the candidates; the
// one multi-hunk small commit among six single-hunk ones is always taken.
func TestBuildHunkStrata(t *testing.T) {
	r := newTestRepo(t)
	var file []string
	for i := range 100 {
		file = append(file, fmt.Sprintf("x%d = %d", i, i))
	}
	r.write("m.py", file)
	r.commit("initial")
	for i := range 6 {
		file[10+12*i] = fmt.Sprintf("single%d = 1", i)
		r.write("m.py", file)
		r.commit(fmt.Sprintf("single %d", i))
	}
	file[5], file[95] = "multi_a = 1", "multi_b = 2"
	r.write("m.py", file)
	r.commit("multi")
	for seed := range int64(10) {
		rows, st, err := Build(context.Background(), BuildOptions{Repo: r.dir, N: 5, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		// 5 rows: 2 small (the only class with candidates).
		var got []string
		for _, row := range rows {
			got = append(got, fmt.Sprintf("%s/%d", row.Message, row.NHunks))
		}
		if len(rows) != 2 || st.Selected[Small] != 2 || !slices.Contains(got, "multi/2") {
			t.Errorf("seed %d: rows %v, want two small ones, multi among them", seed, got)
		}
	}
}
