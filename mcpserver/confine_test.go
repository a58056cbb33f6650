package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/confinetest"
	"github.com/patchbench/patchbench/patch"
)

// TestEngineToolsConfined: the tools patchbench mcp serves (apply_patch
// tolerant and strict, forward and reverse, dry run; repair; convert; diff
// of a file) refuse every case of the shared table with its reason, and
// nothing is written.
func TestEngineToolsConfined(t *testing.T) {
	type call struct {
		tool string
		args map[string]any
	}
	for _, c := range confinetest.Cases {
		calls := []call{
			{"apply_patch", map[string]any{}},
			{"apply_patch", map[string]any{"strict": true}},
			{"apply_patch", map[string]any{"reverse": true}},
			{"apply_patch", map[string]any{"dry_run": true}},
			{"repair", map[string]any{}},
			{"convert", map[string]any{"to": "v4a"}},
		}
		for _, cl := range calls {
			name := c.Name + "/" + cl.tool
			if len(cl.args) > 0 {
				name += "/" + strings.Join(keys(cl.args), ",")
			}
			t.Run(name, func(t *testing.T) {
				tr := confinetest.New(t)
				cl.args["patch"] = tr.Patch(c)
				text, failed := runTool(t, tr.Dir, cl.tool, cl.args)
				if want := tr.Want(c, false); !failed || !strings.Contains(unescapeJSON(text), want) {
					t.Errorf("failed=%v, answer %.600q; want a failure containing %q", failed, text, want)
				}
				tr.Unchanged(t)
			})
		}
		if c.ByMode {
			continue
		}
		t.Run(c.Name+"/diff", func(t *testing.T) {
			tr := confinetest.New(t)
			text, failed := runTool(t, tr.Dir, "diff", map[string]any{"old_path": tr.RefusedPath(c), "new_text": "x\n"})
			// The same refusal, worded for a read.
			want := patch.ForReading(unsafeText(tr.Want(c, false))).Error()
			if !failed || !strings.Contains(text, want) {
				t.Errorf("failed=%v, answer %.600q; want a failure containing %q", failed, text, want)
			}
			tr.Unchanged(t)
		})
	}
}

func runTool(t *testing.T, dir, name string, args map[string]any) (string, bool) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range EngineTools(dir) {
		if tool.Name == name {
			ans := tool.Run(context.Background(), raw)
			return ans.Text, ans.Failed
		}
	}
	t.Fatalf("no tool %s", name)
	return "", false
}

// unsafeText is a confinement refusal with the given text.
type unsafeText string

func (e unsafeText) Error() string { return string(e) }
func (e unsafeText) Unwrap() error { return patch.ErrUnsafePath }

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// unescapeJSON undoes the quoting of the JSON report, so that an error
// text compares as printed.
func unescapeJSON(s string) string {
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\t`, "\t").Replace(s)
}
