package benchcli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/patchbench/patchbench/cmd/internal/cli"
)

// --instance_ids takes the words after it up to the next flag, as the
// official harness's nargs="+"; nothing else changes.
func TestExpandNargs(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"swe", "eval", "--instance_ids", "a", "b", "c", "--run_id", "r"},
			[]string{"swe", "eval", "--instance_ids=a", "--instance_ids=b", "--instance_ids=c", "--run_id", "r"}},
		{[]string{"swe", "eval", "--run_id", "r", "--instance_ids", "a"}, []string{"swe", "eval", "--run_id", "r", "--instance_ids=a"}},
		// No value: left for pflag to refuse.
		{[]string{"swe", "eval", "--instance_ids", "--run_id", "r"}, []string{"swe", "eval", "--instance_ids", "--run_id", "r"}},
		{[]string{"swe", "eval", "--instance_ids=a,b", "x"}, []string{"swe", "eval", "--instance_ids=a,b", "x"}},
		{[]string{"swe", "eval", "--instance-ids", "a", "b"}, []string{"swe", "eval", "--instance-ids", "a", "b"}},
		{[]string{"apply", "--", "--instance_ids", "a", "b"}, []string{"apply", "--", "--instance_ids", "a", "b"}},
		// The harness's short options (its argparse's -d, -s, -i, -p, -t,
		// -id), under swe eval only; -n (--namespace) stays for pflag
		// to refuse.
		{[]string{"swe", "eval", "-d", "D", "-s", "dev", "-p", "P", "-id", "r", "-t", "600", "-i", "a", "b", "-n", "x"},
			[]string{"swe", "eval", "--dataset_name", "D", "--split", "dev", "--predictions_path", "P", "--run_id", "r", "--timeout", "600", "--instance_ids=a", "--instance_ids=b", "-n", "x"}},
		{[]string{"swe", "eval", "-id=r", "-d=D"}, []string{"swe", "eval", "--run_id=r", "--dataset_name=D"}},
		{[]string{"apply", "-p", "1", "-d", "x"}, []string{"apply", "-p", "1", "-d", "x"}},
		{[]string{"swe", "rerun", "-d", "x"}, []string{"swe", "rerun", "-d", "x"}},
	} {
		if diff := cmp.Diff(c.want, ExpandNargs(c.in)); diff != "" {
			t.Errorf("ExpandNargs(%q) (-want +got):\n%s", c.in, diff)
		}
	}
}

// The official harness's --timeout is seconds; ours a duration; both parse.
func TestTimeoutSeconds(t *testing.T) {
	cmd := newSWEEvalCommand(cli.Stdio{})
	for _, c := range []struct{ arg, want string }{{"1800", "30m0s"}, {"45m", "45m0s"}, {"90", "1m30s"}} {
		if err := cmd.Flags().Set("timeout", c.arg); err != nil {
			t.Fatal(err)
		}
		if got := cmd.Flags().Lookup("timeout").Value.String(); got != c.want {
			t.Errorf("--timeout %s = %s, want %s", c.arg, got, c.want)
		}
	}
	if err := cmd.Flags().Set("timeout", "soon"); err == nil {
		t.Error("--timeout soon: accepted")
	}
	// The harness's spellings are the flags they name.
	for alias, name := range harnessAliases {
		if f := cmd.Flags().Lookup(alias); f == nil || f.Name != name {
			t.Errorf("--%s: %v, want --%s", alias, f, name)
		}
	}
}

// --split is added to a Hugging Face id given without one; a file keeps
// its name (the harness ignores the split of a file too); an id that names
// another split is a usage error, not a --split silently dropped.
func TestWithSplit(t *testing.T) {
	for _, c := range []struct {
		dataset, split, want string
		wantErr              bool
	}{
		{"princeton-nlp/SWE-bench_Lite", "dev", "princeton-nlp/SWE-bench_Lite:dev", false},
		{"princeton-nlp/SWE-bench_Lite:dev", "dev", "princeton-nlp/SWE-bench_Lite:dev", false},
		{"princeton-nlp/SWE-bench_Lite@main:test", "test", "princeton-nlp/SWE-bench_Lite@main:test", false},
		{"princeton-nlp/SWE-bench_Lite:test", "dev", "", true},
		{"data/preds.jsonl", "dev", "data/preds.jsonl", false},
	} {
		got, err := withSplit(c.dataset, c.split)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("withSplit(%q, %q) = %q, %v; want %q, error %v", c.dataset, c.split, got, err, c.want, c.wantErr)
		}
	}
}

// --max-workers is the harness's --max_workers: 0 or less evaluates one
// instance at a time (its run_threadpool runs them in sequence); --workers
// 0 is patchbench's default.
func TestMaxWorkersAsHarness(t *testing.T) {
	for _, c := range []struct {
		args    []string
		want    int
		wantErr bool
	}{
		{[]string{"--max_workers", "0"}, 1, false},
		{[]string{"--max-workers", "-3"}, 1, false},
		{[]string{"--max_workers", "8"}, 8, false},
		{[]string{"--workers", "0"}, 0, false},
		{[]string{"--workers", "1", "--max_workers", "0"}, 1, false},
		{[]string{"--workers", "4", "--max_workers", "0"}, 0, true},
		{[]string{"--workers", "-1"}, 0, true},
	} {
		var tf sweTestFlags
		fs := pflag.NewFlagSet("eval", pflag.ContinueOnError)
		tf.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		err := tf.checkWorkers(fs)
		if (err != nil) != c.wantErr {
			t.Errorf("%q: err = %v, want error %v", c.args, err, c.wantErr)
			continue
		}
		if err == nil && tf.workers != c.want {
			t.Errorf("%q: workers %d, want %d", c.args, tf.workers, c.want)
		}
	}
}
