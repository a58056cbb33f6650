package repair_test

// Red-team families for the JSON and document rules of package extract:
// a JSON fixture that names the tool it tests, the tool calls agents
// write, READMEs shown whole (named or not, beside a diff or alone) and
// the answer wrapped in ````markdown under a line that names README.md.
// The READMEs and their changes are real: the README.md commits of the
// click and cobra histories.

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench/applybench"
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// readmeChange is one commit's change of a project's README.md.
type readmeChange struct{ id, old, new string }

// readmeChanges returns up to n changes of README.md from each bundle
// (oldest kept last), or nil without git or the bundles.
func readmeChanges(t *testing.T, n int) []readmeChange {
	dir := filepath.Join(testdata.SharedDir(), "repos")
	var out []readmeChange
	for _, name := range []string{"cobra", "click"} {
		repo := filepath.Join(t.TempDir(), name)
		if err := exec.Command("git", "clone", "-q", "--bare", filepath.Join(dir, name+".bundle"), repo).Run(); err != nil {
			t.Logf("readme families: %s: %v", name, err)
			continue
		}
		list, err := git(repo, "log", "--first-parent", "--no-merges", "--format=%H", "-n", "200", "--", "README.md")
		if err != nil {
			continue
		}
		k := 0
		for _, c := range strings.Fields(list) {
			if k == n {
				break
			}
			o, err1 := git(repo, "show", c+"^:README.md")
			nw, err2 := git(repo, "show", c+":README.md")
			if err1 != nil || err2 != nil || o == nw || !strings.HasSuffix(o, "\n") || !strings.HasSuffix(nw, "\n") {
				continue
			}
			out = append(out, readmeChange{id: name + "@" + c[:12], old: o, new: nw})
			k++
		}
	}
	return out
}

// wrapFence returns text in a markdown fence longer than any run of
// backticks in it.
func wrapFence(lang, text string) string {
	n := 3
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "```") {
			n = max(n, len(t)-len(strings.TrimLeft(t, "`"))+1)
		}
	}
	f := strings.Repeat("`", n)
	return f + lang + "\n" + text + f + "\n"
}

// docCases makes the families (per cases each at most):
//
//   - readme_md_wrapped_named: a real change of README.md as a ```diff in
//     the answer wrapped whole in ````markdown (a heading, a sentence),
//     under "Here is the change to README.md:" (applied).
//   - readme_doc_unnamed: the commit's edit (udiff-h) as a ```diff
//     example in a real README shown whole, named by nothing (refused).
//   - readme_doc_beside_edit: the commit's edit in a ```diff fence beside
//     a real README shown whole under "And the updated README.md:", no
//     edit in it (refused: the README would be dropped without a word).
//   - v4a_json_fixture_named: the envelope in a JSON test fixture that
//     names apply_patch, beside "expected" (refused).
//   - v4a_json_call_explained: VS Code Copilot's apply_patch arguments,
//     input and explanation; v4a_json_tool_patch: {"tool": "patch",
//     "patch": ...} (applied).
func docCases(t *testing.T, rows []testdata.Triple, per int) []applybench.Case {
	var out []applybench.Case
	n := map[string]int{}
	add := func(id, fam, path, old, text string, want *string) {
		if n[fam] >= per {
			return
		}
		n[fam]++
		out = append(out, applybench.Case{ID: id + "/" + fam, Family: fam, Path: path, OldCode: old, Patch: text, Expected: want})
	}
	readmes := readmeChanges(t, per/2)
	for _, rc := range readmes {
		fp := patch.Make("README.md", "README.md", rc.old, rc.new, patch.MakeOptions{Context: 3})
		p, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiff)
		if err != nil {
			continue
		}
		nw := rc.new
		add(rc.id, "readme_md_wrapped_named", "README.md", rc.old, "Here is the change to README.md:\n\n"+wrapFence("markdown", "### Update the README\n\n```diff\n"+p+"```\n\nNothing else changes.\n"), &nw)
	}
	for i, r := range rows {
		newCode := r.NewCode
		fp := patch.Make(r.Path, r.Path, r.OldCode, newCode, patch.MakeOptions{Context: 3, Unique: true})
		if len(readmes) > 0 {
			if p, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.UDiffH); err == nil {
				doc := readmes[i%len(readmes)].new
				// The example after the README's first paragraph.
				at := strings.Index(doc, "\n\n")
				if at < 0 {
					at = len(doc) - 1
				}
				shown := doc[:at+2] + "To make the change to `" + r.Path + "` by hand:\n\n```diff\n" + p + "```\n" + doc[at+1:]
				add(r.ID, "readme_doc_unnamed", r.Path, r.OldCode, wrapFence("markdown", shown), nil)
				add(r.ID, "readme_doc_beside_edit", r.Path, r.OldCode, "```diff\n"+p+"```\n\nAnd the updated README.md:\n\n"+wrapFence("markdown", doc), nil)
			}
		}
		if p, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, patch.V4A); err == nil {
			b, _ := json.Marshal(p)
			q := string(b)
			add(r.ID, "v4a_json_fixture_named", r.Path, r.OldCode, "A test case for the patch tool:\n\n```json\n{\"name\": \"apply_patch\", \"input\": "+q+", \"expected\": \"ok\"}\n```\n", nil)
			add(r.ID, "v4a_json_call_explained", r.Path, r.OldCode, "```json\n{\"input\": "+q+", \"explanation\": \"Apply the fix to "+r.Path+".\"}\n```\n", &newCode)
			add(r.ID, "v4a_json_tool_patch", r.Path, r.OldCode, "{\"tool\": \"patch\", \"patch\": "+q+"}\n", &newCode)
		}
	}
	return out
}
