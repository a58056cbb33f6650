package extract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch/extract"
)

// TestHeredocShell: what the shell does with a heredoc decides whether it
// is the answer's edit. Lines inside a heredoc body are data, not
// commands; an applier that reverses the patch or writes nothing makes no
// edit; an apply named in the prose before the fence counts. Each case
// was decided the other way before these rules.
func TestHeredocShell(t *testing.T) {
	diff := "--- a/hello.txt\n+++ b/hello.txt\n@@ -1 +1 @@\n-hello\n+goodbye\n"
	env := "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+goodbye\n*** End Patch\n"
	saved := "```bash\ncat > fix.patch <<'EOF'\n" + diff + "EOF\n"
	sh := func(open string) string { return "```bash\n" + open + "\n" + diff + "EOF\n```\n" }
	tests := []sampleCase{
		// Must refuse: a script written, not run, whose body applies the
		// saved patch (was applied).
		{"apply line in a script's body", saved + "```\n\nAnd the setup script:\n\n```bash\ncat > setup.sh <<'EOF'\n#!/bin/sh\ngit apply fix.patch\nEOF\n```\n", false},
		{"apply line in a <<- body", saved + "cat > setup.sh <<-END\n\tgit apply fix.patch\n\tEND\n```\n", false},
		{"apply line in the second heredoc of a line", "```bash\ncat > fix.patch <<'A'; cat > run.sh <<'B'\n" + diff + "A\ngit apply fix.patch\nB\n```\n", false},
		{"apply line in a lower-case delimited body", saved + "cat > setup.sh <<eof\ngit apply fix.patch\neof\n```\n", false},
		{"a fixture a Python test applies", "```bash\ncat > tests/fixtures/change.patch <<'EOF'\n" + diff + "EOF\n```\n\n```python\ndef test_apply(tmp_path):\n    os.system(\"git apply tests/fixtures/change.patch\")\n```\n", false},
		{"applied before it is written", "```bash\ngit apply fix.patch\n```\n\n" + saved + "```\n", false},
		// Must refuse: the shell reverses it or writes nothing.
		{"git apply -R heredoc", sh("git apply -R <<'EOF'"), false},
		{"piped to git apply --reverse", sh("cat <<'EOF' | git apply --reverse"), false},
		{"patch -R", sh("patch -R -p1 <<EOF"), false},
		{"patch -Rp1", sh("patch -Rp1 <<EOF"), false},
		{"bash -c git apply -R", sh("bash -c 'git apply -R' <<'EOF'"), false},
		{"git apply --check heredoc", sh("git apply --check <<'EOF'"), false},
		{"git apply --cached", sh("git apply --cached <<'EOF'"), false},
		{"patch --dry-run", sh("patch -p1 --dry-run <<'EOF'"), false},
		{"patch -o elsewhere", sh("patch -p1 -o /tmp/out.txt <<'EOF'"), false},
		{"saved, applied in reverse", saved + "git apply -R fix.patch\n```\n", false},
		{"saved, dry run only", saved + "patch -p1 --dry-run -i fix.patch\n```\n", false},
		// Must apply: the answer means the edit.
		{"instruction in prose before the fence", "Save this as fix.patch and run `git apply fix.patch`:\n\n" + saved + "```\n", true},
		{"instruction in plain prose before", "Save it as fix.patch, then run git apply fix.patch.\n\n" + saved + "```\n", true},
		{"git -C . apply", saved + "git -C . apply fix.patch\n```\n", true},
		{"git -C repo apply", saved + "git -C repo apply fix.patch\n```\n", true},
		{"sh -c patch", saved + "sh -c 'patch -p1 < fix.patch'\n```\n", true},
		{"bash -c git apply", saved + "bash -c \"git apply fix.patch\"\n```\n", true},
		{"patch -i", saved + "patch -p1 -i fix.patch\n```\n", true},
		{"patch --input=", saved + "patch -p1 --input=fix.patch\n```\n", true},
		{"cat F | git apply", saved + "cat fix.patch | git apply -v\n```\n", true},
		{"git apply --3way", saved + "git apply --3way fix.patch\n```\n", true},
		{"script written and run", saved + "cat > setup.sh <<'EOF'\ngit apply fix.patch\nEOF\nbash setup.sh\n```\n", true},
		{"applied, undo in prose", saved + "git apply fix.patch\n```\n\nTo undo it: `git apply -R fix.patch`.\n", true},
		{"checked, then applied on one line", saved + "git apply --check fix.patch && git apply fix.patch\n```\n", true},
		{"heredoc piped to git apply -3", sh("cat <<'EOF' | git apply -3"), true},
		{"git apply --stat --apply", sh("git apply --stat --apply <<'EOF'"), true},
		{"apply_patch, lower-case delimiter, unlabelled fence", "```\ncd /repo\napply_patch <<eof\n" + env + "eof\ngit status\n```\n", true},
		{"apply_patch, indented, text fence", "```text\ncd /repo\n  apply_patch <<'EOF'\n" + env + "EOF\ngit status\n```\n", true},
		{"apply line continued", saved + "git apply \\\n  --whitespace=fix \\\n  fix.patch\n```\n", true},
		{"a script holding git apply <<EOF, run", "```bash\ncat > setup.sh <<'OUTER'\ngit apply <<'EOF'\n" + diff + "EOF\nOUTER\nchmod +x setup.sh && ./setup.sh\n```\n", true},
		{"a script holding git apply <<EOF, not run", "```bash\ncat > setup.sh <<'OUTER'\ngit apply <<'EOF'\n" + diff + "EOF\nOUTER\n```\n", false},

		// The fence's commands decide before the prose.
		{"prose applies, the fence reverses", "Save this as fix.patch and run `git apply fix.patch`:\n\n" + saved + "git apply -R fix.patch\n```\n", false},
		{"apply_patch <<-", "```\ncd /repo\napply_patch <<-EOF\n" + env + "\tEOF\ngit status\n```\n", true},
	}
	checkSamples(t, tests)
}

// TestHeredocReplaced: a file saved twice is applied as the second
// heredoc wrote it. The first is no edit the shell makes, and the answer
// that holds it is refused (ErrPartSample), not applied with both.
func TestHeredocReplaced(t *testing.T) {
	first := "--- a/hello.txt\n+++ b/hello.txt\n@@ -1 +1 @@\n-hello\n+goodbye\n"
	second := "--- a/hello.txt\n+++ b/hello.txt\n@@ -1 +1 @@\n-hello\n+bye\n"
	answer := "```bash\ncat > fix.patch <<'EOF'\n" + first + "EOF\n```\n\nBetter:\n\n```bash\ncat > fix.patch <<'EOF'\n" + second + "EOF\ngit apply fix.patch\n```\n"
	_, err := extract.Extract(answer)
	if !errors.Is(err, extract.ErrPartSample) {
		t.Errorf("err %v, want ErrPartSample", err)
	}
}

// FuzzHeredocShell: shell lines of any shape never panic the scan.
func FuzzHeredocShell(f *testing.F) {
	for _, s := range []string{
		"cat > fix.patch <<'EOF' && git apply fix.patch", "sh -c 'patch -p1 < f' <<A; cat <<-B | tee x",
		"bash -lc \"git -C r apply -R\" <<\\EOF", "echo $(cat <<EOF", "patch -Rp", "a `b <<EOF",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		text := "```bash\n" + line + "\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nEOF\n" + line + "\n```\n"
		res, err := extract.Extract(text)
		if err == nil && !strings.Contains(res.Text, "+b") {
			t.Fatalf("extracted %q without the edit", res.Text)
		}
	})
}
