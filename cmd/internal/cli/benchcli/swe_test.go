package benchcli

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
