package llm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDotEnv(t *testing.T) {
	in := `# comment
OPENAI_API_KEY=sk-plain
export ANTHROPIC_API_KEY = "sk-double \"q\" \n end" # trailing comment
SINGLE='lit\n #not a comment'
SPACED =  value with spaces   # comment
EMPTY=
HASH=abc#def

  INDENTED=yes
`
	got, err := ParseDotEnv(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"OPENAI_API_KEY":    "sk-plain",
		"ANTHROPIC_API_KEY": "sk-double \"q\" \n end",
		"SINGLE":            `lit\n #not a comment`,
		"SPACED":            "value with spaces",
		"EMPTY":             "",
		"HASH":              "abc#def",
		"INDENTED":          "yes",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseDotEnvErrorsHideValues(t *testing.T) {
	for _, in := range []string{
		"KEY=\"sk-secret-value",
		"KEY='sk-secret-value",
		"KEY=\"sk-secret-value\" trailing",
		"sk-secret-value",
		"1KEY=sk-secret-value",
	} {
		_, err := ParseDotEnv(strings.NewReader("OK=1\n" + in))
		if err == nil {
			t.Errorf("%q: no error", in)
			continue
		}
		if !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: error %q does not name line 2", in, err)
		}
		if strings.Contains(err.Error(), "secret") && !strings.HasPrefix(in, "1KEY") {
			t.Errorf("%q: error %q shows the value", in, err)
		}
	}
}

func TestLoadDotEnvFillsOnlyUnset(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	if err := os.WriteFile(path, []byte("PB_TEST_SET=from-file\nPB_TEST_UNSET=from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PB_TEST_SET", "from-env")
	t.Setenv("PB_TEST_UNSET", "")
	os.Unsetenv("PB_TEST_UNSET")
	if err := LoadDotEnv(path); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("PB_TEST_SET"); got != "from-env" {
		t.Errorf("set variable overwritten: %q", got)
	}
	if got := os.Getenv("PB_TEST_UNSET"); got != "from-file" {
		t.Errorf("unset variable = %q, want from-file", got)
	}
	if err := LoadDotEnv(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v, want fs.ErrNotExist", err)
	}
}
