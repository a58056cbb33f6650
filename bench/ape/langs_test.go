package ape

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// commitTree commits files into a new repository and returns it and the
// commit.
func commitTree(t *testing.T, files map[string]string) (dir, commit string) {
	t.Helper()
	dir = t.TempDir()
	gitT(t, dir, "init", "-q")
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "one")
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return dir, strings.TrimSpace(string(out))
}

type checkCase struct {
	name, content, want string
	pass                bool
}

func runChecks(t *testing.T, dir string, task *Task, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		c, err := Compile(context.Background(), task, tc.content, CheckOptions{Repo: dir})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Pass != tc.pass || !strings.Contains(strings.Join(c.Errors, "\n"), tc.want) {
			t.Errorf("%s: pass %v errors %q output %q; want pass %v and %q", tc.name, c.Pass, c.Errors, c.Output, tc.pass, tc.want)
		}
	}
}

// TestJavaCheck: javac in the sandbox compiles the file against the other
// sources of its tree (a class of another package it imports), and names
// the line of an undefined symbol and of a syntax error.
func TestJavaCheck(t *testing.T) {
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("no javac")
	}
	util := "package com.acme.util;\n\npublic class Util {\n    public static int twice(int x) { return 2 * x; }\n}\n"
	calc := "package com.acme;\n\nimport com.acme.util.Util;\n\npublic class Calc {\n    public int f(int x) { return Util.twice(x); }\n}\n"
	dir, commit := commitTree(t, map[string]string{
		"src/main/java/com/acme/util/Util.java": util,
		"src/main/java/com/acme/Calc.java":      calc,
	})
	task := &Task{ID: "java", CommitHash: commit, FilePathBefore: "src/main/java/com/acme/Calc.java", FilePathAfter: "src/main/java/com/acme/Calc.java"}
	runChecks(t, dir, task, []checkCase{
		{"good", strings.Replace(calc, "Util.twice(x)", "Util.twice(x) + 1", 1), "", true},
		{"undefined", strings.Replace(calc, "Util.twice(x)", "Util.thrice(x)", 1), "Calc.java:6: error: cannot find symbol", false},
		{"syntax", strings.Replace(calc, "Util.twice(x);", "Util.twice(x)", 1), "Calc.java:6: error: ';' expected", false},
	})
}

// TestRustCheck: cargo check, offline, of the crate holding the file.
func TestRustCheck(t *testing.T) {
	if _, err := exec.LookPath("rustc"); err != nil {
		t.Skip("no rust toolchain")
	}
	lib := "pub fn twice(x: i32) -> i32 {\n    x * 2\n}\n"
	dir, commit := commitTree(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"src/lib.rs": lib,
	})
	task := &Task{ID: "rust", CommitHash: commit, FilePathBefore: "src/lib.rs", FilePathAfter: "src/lib.rs"}
	runChecks(t, dir, task, []checkCase{
		{"good", lib + "\npub fn thrice(x: i32) -> i32 {\n    x * 3\n}\n", "", true},
		{"undefined", strings.Replace(lib, "x * 2", "y * 2", 1), "src/lib.rs:2:5: error[E0425]: cannot find value `y` in this scope", false},
	})
}
