// Package ape evaluates instructed edits the way APE-Bench I does: for each
// task (an instruction, the file before the edit and the gold patch) n
// candidate edits are generated, applied to the file with the tolerant patch
// engine, checked by the compiler in the environment of the task's commit,
// and graded by a judge whose votes pass a candidate when their good and
// excellent grades outnumber their poor and unacceptable ones (see
// Verdict); compile pass@k, judge pass@k and the semantic drop between them
// are the headline figures.
package ape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/dataset"
	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/llm"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

// Task is one APE-Bench I task. The JSON names are those of the published
// dataset (HuajianXin/APE-Bench_I), so its rows read as tasks and tasks
// built here read back the same way.
type Task struct {
	ID             string `json:"id"`
	CommitHash     string `json:"commit_hash"`
	ParentCommit   string `json:"parent_commit_hash"`
	FilePathBefore string `json:"file_path_before"`
	FilePathAfter  string `json:"file_path_after"`
	ContentBefore  string `json:"content_before"`
	ContentAfter   string `json:"content_after"`
	GoldDiff       string `json:"gold_diff"`
	Instruction    string `json:"full_instruction"`
	AddedLines     int    `json:"added_lines"`
	TotalChanges   int    `json:"total_changes"`
	ChangeType     string `json:"change_type"`
	Category       string `json:"majority_task_category"`
	Difficulty     string `json:"majority_difficulty"`
}

// Path is the file the task edits.
func (t *Task) Path() string {
	if t.FilePathAfter != "" {
		return t.FilePathAfter
	}
	return t.FilePathBefore
}

// ReadTasks reads tasks from a JSONL file.
func ReadTasks(path string) ([]Task, error) {
	tasks, bad, err := ReadTasksLenient(path)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return tasks, err
}

// ReadTasksLenient reads a tasks file past its bad lines (not JSON, no
// file path, a file path that may not be written inside a tree (absolute,
// with "..", inside .git; see patch.CheckPath), an id seen before), which
// it returns in bad, each naming the file, the line and the id; the other
// tasks run.
func ReadTasksLenient(path string) (tasks []Task, bad []error, err error) {
	seen := map[string]int{}
	err = dataset.Each(path, dataset.Options{}, func(t Task, at dataset.Pos, rerr error) error {
		file, line := at.File, at.N()
		if rerr != nil {
			bad = append(bad, fmt.Errorf("ape: %s:%d: %w", file, line, errors.Unwrap(rerr)))
			return nil
		}
		if t.Path() == "" {
			bad = append(bad, fmt.Errorf("ape: %s:%d (id %q): no file path", file, line, t.ID))
			return nil
		}
		// Its check would write there: refused as a patch's path is.
		if err := checkPaths(&t); err != nil {
			bad = append(bad, fmt.Errorf("ape: %s:%d (id %q): %w", file, line, t.ID, err))
			return nil
		}
		if t.ID == "" {
			t.ID = fmt.Sprintf("%.12s:%s", t.CommitHash, t.Path())
		}
		if first, dup := seen[t.ID]; dup {
			bad = append(bad, fmt.Errorf("ape: %s:%d: task %q is also on line %d", file, line, t.ID, first))
			return nil
		}
		seen[t.ID] = line
		tasks = append(tasks, t)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ape: %w", err)
	}
	return tasks, bad, nil
}

// instructPrompt asks for the instruction of a task from its gold diff.
func instructPrompt(t *Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Below is a change to %s, as a unified diff, and the commit message that came with it.\n\n", t.Path())
	fmt.Fprintf(&b, "Commit message:\n%s\n\nDiff:\n```diff\n%s```\n\n", strings.TrimSpace(t.Instruction), t.GoldDiff)
	b.WriteString("Write the instruction a developer would give to ask for exactly this change: what to do, and where, " +
		"precisely enough to make it, without writing the code. Answer with the instruction only.\n")
	return b.String()
}

// Instruct replaces each task's instruction (the commit message, as Build
// leaves it) by one the model writes from the gold diff, as APE-Bench's
// instructions were written, with workers requests at a time. A task whose
// request fails keeps its commit message and is returned in failed, named.
func Instruct(ctx context.Context, tasks []Task, model *runner.Model, workers int) (failed []error) {
	var mu sync.Mutex
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i := range tasks {
		t := &tasks[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			zero := 0.0
			resp, err := model.Complete(ctx, llm.Request{
				Messages:    []llm.Message{{Role: "user", Content: instructPrompt(t)}},
				Temperature: &zero,
				Meta:        map[string]string{"id": replayKey(t.ID, 0), "instruction": t.Instruction}, // replay rows {id, response}
			})
			text := strings.TrimSpace(resp.Text)
			if err == nil && text == "" {
				err = errors.New("empty answer")
			}
			if err != nil {
				mu.Lock()
				failed = append(failed, fmt.Errorf("ape build: instruction of %s: %w", t.ID, err))
				mu.Unlock()
				return
			}
			t.Instruction = text
		}()
	}
	wg.Wait()
	return failed
}

// WriteTasks writes tasks as JSONL, atomically.
func WriteTasks(path string, tasks []Task) error {
	var buf bytes.Buffer
	if err := WriteTasksTo(&buf, tasks); err != nil {
		return err
	}
	return atomicfile.Write(path, buf.Bytes(), 0o644)
}

// WriteTasksTo writes tasks to w as JSONL.
func WriteTasksTo(w io.Writer, tasks []Task) error {
	enc := json.NewEncoder(w)
	for i := range tasks {
		if err := enc.Encode(&tasks[i]); err != nil {
			return err
		}
	}
	return nil
}

// BuildOptions configure Build.
type BuildOptions struct {
	// AnyFile makes tasks of files without a built-in check too (see
	// HasCheck): give it when the run will have a check command.
	AnyFile bool
}

// Build makes one task per commit of the range (git rev-list syntax, oldest
// first) and per file the commit modifies; added, deleted and renamed files
// and merge commits are left out, as they have no PreFile to edit, and so
// are files no built-in check compiles unless opts.AnyFile (they are
// returned in skipped, as commit:path). The instruction is the commit
// message; category and difficulty follow from the message and the size of
// the change (see Classify).
func Build(ctx context.Context, repoDir, rng string, opts BuildOptions) (tasks []Task, skipped []string, err error) {
	rangeArgs, err := repo.RevListArgs(rng)
	if err != nil {
		return nil, nil, fmt.Errorf("ape build: --commits: %w", err)
	}
	rp, err := repo.Open(ctx, repoDir)
	if err != nil {
		return nil, nil, fmt.Errorf("ape build: %w", err)
	}
	defer rp.Close()
	revs, err := rp.RevList(ctx, rangeArgs, repo.RevListOptions{Reverse: true, NoMerges: true})
	if err != nil {
		return nil, nil, fmt.Errorf("ape build: %w", err)
	}
	for _, commit := range revs {
		ps, err := rp.Parents(ctx, commit)
		if err != nil {
			return nil, nil, fmt.Errorf("ape build: %w", err)
		}
		if len(ps) != 1 {
			continue // a root commit has no PreFile
		}
		parent := ps[0]
		msg, err := rp.Message(ctx, commit)
		if err != nil {
			return nil, nil, fmt.Errorf("ape build: %w", err)
		}
		changes, err := rp.Changes(ctx, parent, commit)
		if err != nil {
			return nil, nil, fmt.Errorf("ape build: %w", err)
		}
		for _, ch := range changes {
			if ch.Status != "M" {
				continue
			}
			path := ch.Path
			if !opts.AnyFile && !HasCheck(path) {
				skipped = append(skipped, fmt.Sprintf("%.12s:%s", commit, path))
				continue
			}
			t, err := buildTask(ctx, rp, parent, commit, path, msg)
			if err != nil {
				return nil, nil, err
			}
			tasks = append(tasks, t)
		}
	}
	return tasks, skipped, nil
}

func buildTask(ctx context.Context, rp *repo.Repo, parent, commit, path, msg string) (Task, error) {
	before, err := rp.ReadFile(ctx, parent, path)
	if err != nil {
		return Task{}, fmt.Errorf("ape build: %s of %s: %w", path, commit, err)
	}
	after, err := rp.ReadFile(ctx, commit, path)
	if err != nil {
		return Task{}, fmt.Errorf("ape build: %s of %s: %w", path, commit, err)
	}
	diffb, err := rp.Diff(ctx, parent, commit, repo.DiffOptions{Paths: []string{path}})
	if err != nil {
		return Task{}, fmt.Errorf("ape build: %s of %s: %w", path, commit, err)
	}
	diff := string(diffb)
	added, removed := diffSize(diff)
	t := Task{
		ID: fmt.Sprintf("%.12s:%s", commit, path), CommitHash: commit, ParentCommit: parent,
		FilePathBefore: path, FilePathAfter: path, ContentBefore: string(before), ContentAfter: string(after),
		GoldDiff: diff, Instruction: strings.TrimSpace(msg), AddedLines: added,
		TotalChanges: added + removed, ChangeType: "modified",
	}
	t.Category, t.Difficulty = Classify(t.Instruction, t.TotalChanges)
	return t, nil
}

func diffSize(diff string) (added, removed int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}

// Classify names a task's category from the first word of its message
// (APE-Bench's Feature, Refactor and Bug Fix) and its difficulty from the
// number of changed lines: Easy up to 10, Medium up to 50, Hard beyond.
func Classify(message string, changed int) (category, difficulty string) {
	first := strings.ToLower(strings.TrimSpace(message))
	switch {
	case strings.HasPrefix(first, "fix"), strings.Contains(first, "bug"):
		category = "Bug Fix"
	case strings.HasPrefix(first, "refactor"), strings.HasPrefix(first, "rename"), strings.HasPrefix(first, "simplify"):
		category = "Refactor"
	default:
		category = "Feature"
	}
	switch {
	case changed <= 10:
		difficulty = "Easy"
	case changed <= 50:
		difficulty = "Medium"
	default:
		difficulty = "Hard"
	}
	return category, difficulty
}

func writeFile(path string, data []byte) error { return atomicfile.Write(path, data, 0o644) }
