package extract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch/extract"
)

// TestRetractionPhrases puts each line of prose between two edits of one
// file: a line that takes the first edit back refuses the answer
// (ErrRetracted), a line that goes on to another change merges both.
func TestRetractionPhrases(t *testing.T) {
	first := "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n```\n\n"
	second := "\n\n```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def mul(a, b):\n-    return a + b\n+    return a * b\n```\n"
	tests := []struct {
		line    string
		retract bool
	}{
		// Taken from answers that withdrew their first edit.
		{"Wait, scratch that.", true},
		{"Oops, the above won't compile. Use this instead:", true},
		{"Ignore the previous diff; this is the one to apply:", true},
		{"On second thought, add was right. Change mul:", true},
		{"Correction:", true},
		{"Correction: the fix belongs in mul.", true},
		{"My previous patch had a bug; here's the fixed version:", true},
		{"Sorry, that diff was wrong. Here it is again:", true},
		{"Disregard the above and apply this:", true},
		{"Apologies for the confusion, this is the right change:", true},
		{"Try this instead:", true},
		{"The earlier patch doesn't work for negative numbers. Revised:", true},
		{"Actually, that’s wrong: add was fine.", true},
		// Answers that go on to another change.
		{"Actually, we also need to fix mul:", false},
		{"Additionally, mul has the same bug:", false},
		{"Next, update mul:", false},
		{"Then mul, which uses + instead of *:", false},
		{"Oops, I forgot to also change mul:", false},
		{"Sorry, I forgot the second function:", false},
		{"The old code doesn't work for mul either, so here is another hunk:", false},
		{"mul has a typo as well:", false},
		{"Now the same fix in mul:", false},
		{"The first diff fixes add; this one fixes mul:", false},
		// Words of a retraction that point at no edit: the second edit
		// changes other lines than the first, so it is a second change.
		{"Now make mul use * instead:", false},
		{"Here is the fixed version of mul:", false},
		{"The above makes the incorrect sign go away; mul is wrong too:", false},
		{"You can ignore that warning. mul needs the same fix:", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			res, err := extract.Extract(first + tt.line + second)
			switch {
			case tt.retract && !errors.Is(err, extract.ErrRetracted):
				t.Errorf("err %v, want ErrRetracted", err)
			case !tt.retract && err != nil:
				t.Errorf("err %v, want both edits merged", err)
			case !tt.retract && res.Source != "2 ```diff fences (lines 1-8, 12-19), merged":
				t.Errorf("source %q, want both fences merged", res.Source)
			}
		})
	}
}

// TestJSONCalls: an envelope in JSON is an edit in a tool call (the
// formats agents write), and a sample in other JSON (a fixture).
func TestJSONCalls(t *testing.T) {
	env := `*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+goodbye\n*** End Patch\n`
	tests := []sampleCase{
		{"codex shell call", "```json\n{\"cmd\": [\"apply_patch\", \"" + env + "\"], \"workdir\": \"/repo\"}\n```\n", true},
		{"anthropic tool_use", "```json\n{\n  \"type\": \"tool_use\",\n  \"id\": \"toolu_01\",\n  \"name\": \"apply_patch\",\n  \"input\": {\"input\": \"" + env + "\"}\n}\n```\n", true},
		{"arguments only", "```json\n{\"patch\": \"" + env + "\"}\n```\n", true},
		{"codex shell tool, apply_patch heredoc", "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"bash\", \"-lc\", \"apply_patch <<'EOF'\\n" + env + "EOF\"], \"workdir\": \"/repo\"}}\n```\n", true},
		{"fixture naming apply_patch in prose", "```json\n{\"name\": \"apply_patch with a heredoc\", \"expected\": \"goodbye\\n\", \"input\": \"" + env + "\"}\n```\n", false},
		{"call without a fence", "{\"name\": \"apply_patch\", \"arguments\": {\"input\": \"" + env + "\"}}\n", true},
		{"fixture list", "```json\n[\n  {\"patch\": \"" + env + "\", \"expected\": \"goodbye\\n\"}\n]\n```\n", false},
		{"fixture without a fence", "{\"description\": \"greeting\", \"patch\": \"" + env + "\"}\n", false},
		{"fixture named in jsonc", "```jsonc\n// testdata/greeting.json\n{\n  \"case\": \"greeting\",\n  \"input\": \"" + env + "\"\n}\n```\n", false},
		// VS Code Copilot's apply_patch tool takes input and explanation.
		{"copilot apply_patch arguments", "```json\n{\"input\": \"" + env + "\", \"explanation\": \"Change the greeting.\"}\n```\n", true},
		{"tool named patch, input", "```json\n{\"tool\": \"patch\", \"input\": \"" + env + "\"}\n```\n", true},
		{"tool named patch, patch", "{\"tool\": \"patch\", \"patch\": \"" + env + "\"}\n", true},
		{"codex custom_tool_call", "```json\n{\"type\": \"custom_tool_call\", \"name\": \"apply_patch\", \"call_id\": \"call_1\", \"input\": \"" + env + "\"}\n```\n", true},
		{"hermes tool_call tag", "<tool_call>\n{\"name\": \"apply_patch\", \"arguments\": {\"patch\": \"" + env + "\"}}\n</tool_call>\n", true},
		// A fixture names the tool it tests: its expected output makes it data.
		{"fixture naming apply_patch, expected", "Here is a test fixture for the patch tool, `tests/fixtures/update.json`:\n\n```json\n{\"name\": \"apply_patch\", \"input\": \"" + env + "\", \"expected\": \"goodbye\\n\"}\n```\n", false},
		{"fixture naming apply_patch, want, unfenced", "{\"name\": \"apply_patch\", \"patch\": \"" + env + "\", \"want\": \"goodbye\\n\"}\n", false},
		{"fixture cases naming apply_patch", "```json\n{\"tool\": \"apply_patch\", \"cases\": [{\"input\": \"" + env + "\", \"output\": \"goodbye\\n\"}]}\n```\n", false},
		{"fixture in a python one-liner", "```python\nCASES = [{\"name\": \"apply_patch\", \"input\": \"" + env + "\", \"expected\": \"goodbye\\n\"}]\n```\n", false},
		{"fixture over lines, unfenced", "The test data:\n\n{\n  \"name\": \"apply_patch\",\n  \"input\": \"" + env + "\",\n  \"expected\": \"goodbye\\n\"\n}\n", false},
		{"fixture under a line of prose", "Fixture:\n{\"description\": \"greeting\", \"patch\": \"" + env + "\"}\n", false},
		{"call under a line of prose", "The call:\n{\"name\": \"apply_patch\", \"arguments\": {\"input\": \"" + env + "\"}}\n", true},
		{"responses API response", "```json\n{\"id\": \"resp_1\", \"object\": \"response\", \"status\": \"completed\", \"output\": [{\"type\": \"function_call\", \"call_id\": \"call_1\", \"name\": \"apply_patch\", \"arguments\": \"{\\\"input\\\": \\\"" + strings.ReplaceAll(env, `\n`, `\\n`) + "\\\"}\"}]}\n```\n", true},
		{"fixture with an expected output string", "```json\n{\"name\": \"apply_patch\", \"input\": \"" + env + "\", \"output\": \"Done!\"}\n```\n", false},
		{"tool named something else", "```json\n{\"tool\": \"lint\", \"input\": \"" + env + "\"}\n```\n", false},
	}
	checkSamples(t, tests)
}

// TestHeredocWrites: a heredoc the shell saves to a file is an edit only
// when the answer applies that file.
func TestHeredocWrites(t *testing.T) {
	diff := "--- a/hello.txt\n+++ b/hello.txt\n@@ -1 +1 @@\n-hello\n+goodbye\n"
	tests := []sampleCase{
		{"saved, applied in prose", "```bash\ncat <<'EOF' > fix.patch\n" + diff + "EOF\n```\n\nThen run `git apply fix.patch`.\n", true},
		{"saved, patch -p1", "```sh\ncat > /tmp/fix.patch <<EOF\n" + diff + "EOF\npatch -p1 < /tmp/fix.patch\n```\n", true},
		{"piped to git apply", "```bash\ncat <<'EOF' | git apply\n" + diff + "EOF\n```\n", true},
		{"git apply reads it", "```bash\ngit apply <<'EOF'\n" + diff + "EOF\n```\n", true},
		{"checked, then applied", "```bash\ncat > fix.patch <<'EOF'\n" + diff + "EOF\ngit apply --check fix.patch && git apply fix.patch\n```\n", true},
		{"only checked", "```bash\ncat > tests/fixtures/greeting.patch <<'EOF'\n" + diff + "EOF\n```\n\nConfirm the fixture is well formed with `git apply --check tests/fixtures/greeting.patch`.\n", false},
		{"tee, nothing applies it", "```bash\ntee tests/data/fixture.diff <<'EOF'\n" + diff + "EOF\n```\n", false},
		{"appended to a file", "```bash\ncat >> notes/changes.diff << 'EOF'\n" + diff + "EOF\n```\n", false},
		{"a README written, its example", "````bash\ncat > README.md <<'EOF'\n# Tool\n\n```diff\n" + diff + "```\nEOF\n````\n", false},
	}
	checkSamples(t, tests)
}

// sampleCase is an answer whose edit is the answer's (edit) or a sample
// (ErrSample).
type sampleCase struct {
	name, input string
	edit        bool
}

func checkSamples(t *testing.T, tests []sampleCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := extract.Extract(tt.input)
			switch {
			case tt.edit && err != nil:
				t.Errorf("err %v, want the edit", err)
			case !tt.edit && !errors.Is(err, extract.ErrSample):
				t.Errorf("err %v, want ErrSample", err)
			}
		})
	}
}
