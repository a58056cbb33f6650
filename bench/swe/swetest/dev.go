package swetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/patchbench/patchbench/internal/testdata"
)

// DevInstance is one instance of the dev benchmark.
type DevInstance struct {
	ID, Repo, Path, Base string
	// Patch is the prediction; Family is "" for git's own diff, else the
	// malformed family.
	Patch, Family string
	// Old is the file at base; Expected the file the patch should give, or
	// nil when the patch must be refused.
	Old      string
	Expected *string
}

// DevBench is a benchmark built from the shared dev corpora.
type DevBench struct {
	Repos, Dataset, Predictions string
	Instances                   []DevInstance
	RepoNames                   []string
}

type devTriple struct {
	ID      string `json:"id"`
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	OldCode string `json:"old_code"`
	NewCode string `json:"new_code"`
	UDiff   string `json:"udiff"`
}

type devMalformed struct {
	ID       string  `json:"id"`
	Family   string  `json:"family"`
	Path     string  `json:"path"`
	OldCode  string  `json:"old_code"`
	Patch    string  `json:"patch"`
	Expected *string `json:"expected"`
}

// BuildDev builds, under dir, one bare git repository per repository of
// diffxyz-dev.jsonl.gz (in dataDir) whose history commits, one commit per
// row, the old_code of the row's file at its path; then a dataset and
// predictions in SWE-bench's schema: one instance per row with git's diff as
// model_patch, and one per row of malformed-dev.jsonl.gz with the malformed
// patch (when a malformed case's file differs from the row's, as for
// wrong_file, one more commit holds it). Nothing is fetched.
func BuildDev(dir, dataDir string) (*DevBench, error) {
	triples, err := testdata.ReadJSONL[devTriple](filepath.Join(dataDir, "diffxyz-dev.jsonl.gz"))
	if err != nil {
		return nil, err
	}
	malformed, err := testdata.ReadJSONL[devMalformed](filepath.Join(dataDir, "malformed-dev.jsonl.gz"))
	if err != nil {
		return nil, err
	}
	byBase := map[string][]devMalformed{}
	for _, m := range malformed {
		base, _, _ := strings.Cut(m.ID, "#")
		byBase[base] = append(byBase[base], m)
	}
	b := &DevBench{Repos: filepath.Join(dir, "repos")}
	byRepo := map[string][]devTriple{}
	for _, t := range triples {
		if _, ok := byRepo[t.Repo]; !ok {
			b.RepoNames = append(b.RepoNames, t.Repo)
		}
		byRepo[t.Repo] = append(byRepo[t.Repo], t)
	}
	for _, name := range b.RepoNames {
		insts, err := buildDevRepo(filepath.Join(b.Repos, filepath.FromSlash(name)), name, byRepo[name], byBase)
		if err != nil {
			return nil, err
		}
		b.Instances = append(b.Instances, insts...)
	}
	var ds, preds bytes.Buffer
	for _, in := range b.Instances {
		model := "dev-udiff"
		if in.Family != "" {
			model = "dev-malformed"
		}
		line, _ := json.Marshal(map[string]any{"instance_id": in.ID, "repo": in.Repo, "base_commit": in.Base,
			"patch": "", "test_patch": "", "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]", "version": "dev"})
		ds.Write(append(line, '\n'))
		line, _ = json.Marshal(map[string]any{"instance_id": in.ID, "model_name_or_path": model, "model_patch": in.Patch})
		preds.Write(append(line, '\n'))
	}
	b.Dataset = filepath.Join(dir, "dataset.jsonl")
	b.Predictions = filepath.Join(dir, "predictions.jsonl")
	if err := os.WriteFile(b.Dataset, ds.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(b.Predictions, preds.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return b, nil
}

// buildDevRepo writes the history of one repository with git fast-import.
func buildDevRepo(gitDir, name string, rows []devTriple, byBase map[string][]devMalformed) ([]DevInstance, error) {
	if out, err := exec.Command("git", "init", "-q", "--bare", gitDir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init %s: %v: %s", gitDir, err, out)
	}
	var stream bytes.Buffer
	var insts []DevInstance
	mark := 0
	commit := func(path, content, msg string) int {
		mark++
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter dev <dev@example.com> %d +0000\ndata %d\n%s\n",
			mark, 1700000000+mark, len(msg), msg)
		if mark > 1 {
			fmt.Fprintf(&stream, "from :%d\n", mark-1)
		}
		fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
		return mark
	}
	short := strings.ReplaceAll(name, "/", "__")
	for i, t := range rows {
		base := fmt.Sprintf("%s-%04d", short, i+1)
		m := commit(t.Path, t.OldCode, t.ID)
		nc := t.NewCode
		insts = append(insts, DevInstance{ID: base, Repo: name, Path: t.Path, Base: fmt.Sprint(m), Patch: t.UDiff, Old: t.OldCode, Expected: &nc})
		for _, mf := range byBase[t.ID] {
			mm := m
			if mf.OldCode != t.OldCode {
				mm = commit(mf.Path, mf.OldCode, mf.ID)
			}
			fam := strings.NewReplacer(":", ".", "+", "_").Replace(mf.Family)
			insts = append(insts, DevInstance{ID: base + "." + fam, Repo: name, Path: mf.Path, Base: fmt.Sprint(mm),
				Patch: mf.Patch, Family: mf.Family, Old: mf.OldCode, Expected: mf.Expected})
		}
		if m != mark {
			// Later rows build on the row's own file again.
			commit(t.Path, t.OldCode, t.ID+" (again)")
		}
	}
	marks := filepath.Join(gitDir, "marks")
	cmd := exec.Command("git", "fast-import", "--quiet", "--export-marks="+marks)
	cmd.Dir = gitDir
	cmd.Stdin = &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git fast-import in %s: %v: %s", gitDir, err, out)
	}
	mb, err := os.ReadFile(marks)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(mb)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		ids[strings.TrimPrefix(k, ":")] = v
	}
	for i := range insts {
		insts[i].Base = ids[insts[i].Base]
	}
	os.Remove(marks)
	return insts, nil
}

// ReadFileAt reads path at commit in the repository gitDir.
func ReadFileAt(gitDir, commit, path string) (string, error) {
	cmd := exec.Command("git", "--git-dir", gitDir, "cat-file", "blob", commit+":"+path)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.Discard
	err := cmd.Run()
	return out.String(), err
}
