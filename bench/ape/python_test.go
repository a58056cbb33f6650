package ape

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPythonCheck runs the built-in Python check in the detected sandbox
// on a good file, a syntax error and an undefined name.
func TestPythonCheck(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "mod.py"), []byte("import os\n\ndef f(x):\n    return os.path.join(x, 'a')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "one")
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	task := &Task{ID: "py", ParentCommit: strings.TrimSpace(string(out)), FilePathBefore: "mod.py", FilePathAfter: "mod.py"}
	for _, tc := range []struct {
		name, content, want string
		pass                bool
	}{
		{"good", "import os\n\ndef f(x, y=1):\n    z = [i for i in range(y)]\n    return os.path.join(x, str(z))\n", "", true},
		{"syntax", "def f(x):\n    return (x\n", "SyntaxError", false},
		{"undefined", "import os\n\ndef f(x):\n    return os.path.join(x, y)\n", "mod.py:4:28: undefined name 'y'", false},
	} {
		c, err := Compile(context.Background(), task, tc.content, CheckOptions{Repo: dir})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Pass != tc.pass || !strings.Contains(strings.Join(c.Errors, "\n"), tc.want) {
			t.Errorf("%s: pass %v errors %q output %q; want pass %v and %q", tc.name, c.Pass, c.Errors, c.Output, tc.pass, tc.want)
		}
		if !strings.HasPrefix(c.Command, "/usr/bin/python3 ") {
			t.Errorf("%s: command %q does not name /usr/bin/python3", tc.name, c.Command)
		}
	}
}
