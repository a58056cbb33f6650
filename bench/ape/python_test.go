package ape

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestPythonCheck runs the built-in Python check in the detected sandbox
// on a good file, a syntax error and an undefined name.
func TestPythonCheck(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dir, commit := commitTree(t, map[string]string{"mod.py": "import os\n\ndef f(x):\n    return os.path.join(x, 'a')\n"})
	task := &Task{ID: "py", CommitHash: commit, FilePathBefore: "mod.py", FilePathAfter: "mod.py"}
	runChecks(t, dir, task, []checkCase{
		{"good", "import os\n\ndef f(x, y=1):\n    z = [i for i in range(y)]\n    return os.path.join(x, str(z))\n", "", true},
		{"syntax", "def f(x):\n    return (x\n", "SyntaxError", false},
		{"undefined", "import os\n\ndef f(x):\n    return os.path.join(x, y)\n", "mod.py:4:28: undefined name 'y'", false},
	})
	c, err := Compile(context.Background(), task, "x = 1\n", CheckOptions{Repo: dir})
	if err != nil || !strings.HasPrefix(c.Command, "/usr/bin/python3 ") {
		t.Errorf("command %q (%v) does not name /usr/bin/python3", c.Command, err)
	}
}
