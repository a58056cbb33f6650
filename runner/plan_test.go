package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMergeRefusesAnUnfinishedShard: a shard whose run was stopped before
// its end (here cancelled; SIGKILL leaves the same: rows, no lock) is not
// held, yet holds fewer cases than it selected; Merge refuses it, naming
// the shard and the counts, and writes nothing. Resumed, it merges into
// the cases of the unsharded run, each once.
func TestMergeRefusesAnUnfinishedShard(t *testing.T) {
	root := t.TempDir()
	cases := makeCases(40)
	dirs := []string{filepath.Join(root, "s1"), filepath.Join(root, "s2")}
	run := func(i int, ctx context.Context, fn Func) (Summary, error) {
		sh := Shard{Index: i + 1, Count: 2}
		if err := WriteRunInfo(mkdir(t, dirs[i]), map[string]any{"benchmark": "t", "shard": sh.String()}); err != nil {
			t.Fatal(err)
		}
		return Run(ctx, cases, fn, Options{Out: filepath.Join(dirs[i], "results.jsonl"), Shard: sh, Resume: true})
	}
	if _, err := run(0, t.Context(), succeed); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var n atomic.Int32
	s, err := run(1, ctx, func(ctx context.Context, c Case) (Result, error) {
		if n.Add(1) > 3 {
			cancel()
			return nil, ctx.Err()
		}
		return succeed(ctx, c)
	})
	if !errors.Is(err, context.Canceled) || s.Done != 3 {
		t.Fatalf("shard 2: done %d, err %v; want 3 and cancelled", s.Done, err)
	}
	out := filepath.Join(root, "merged")
	_, err = Merge(MergeOptions{Dirs: dirs, Out: out, ResultsFile: "results.jsonl"})
	want := fmt.Sprintf("s2 (shard 2/2) holds 3 of its %d cases: its run did not finish", s.Selected)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("merge of an unfinished shard: %v; want %q", err, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused merge left %s: %v", out, err)
	}
	if _, err := run(1, t.Context(), succeed); err != nil {
		t.Fatal(err)
	}
	sum, err := Merge(MergeOptions{Dirs: dirs, Out: out, ResultsFile: "results.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != len(cases) {
		t.Errorf("merged %d rows, want %d", sum.Rows, len(cases))
	}
	assertEachOnce(t, filepath.Join(out, "results.jsonl"), keysOf(cases))
	if p, ok, err := readPlan(out); err != nil || !ok || p.Selected != len(cases) {
		t.Errorf("merged plan: %+v %v %v; want %d cases", p, ok, err, len(cases))
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
