package repair_test

import (
	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
)

// shellPerFamily caps the shell families: each holds one reading of the
// answer's shell, the same in every commit.
const shellPerFamily = 10

// shellFamilies makes the families of answers whose shell decides what
// happens to the edit p (printed from a dev commit) they hold in a
// heredoc, for udiff-h, udiff-l and V4A:
//
//   - *_heredoc_script (must refuse): p saved to fix.patch, then a
//     script written whose body applies fix.patch, never run: the body
//     is data. *_heredoc_script_run: the same script, then run.
//   - *_heredoc_prose_before: "Save this as fix.patch and run `git apply
//     fix.patch`:" above the fence that saves it.
//   - *_heredoc_cmd: saved, then applied by a command of another
//     spelling (git -C . apply, sh -c 'patch -p1 < fix.patch', patch -i,
//     patch --input=, a pipe from cat; for V4A apply_patch < fix.patch
//     and the like), one spelling a commit.
//   - *_heredoc_reversed, *_heredoc_checked (udiff, must refuse): the
//     heredoc fed to git apply -R, patch -R or a pipe to git apply
//     --reverse; to git apply --check or patch --dry-run. The shell
//     writes nothing forward.
//   - v4a_apply_patch_bare: apply_patch on a heredoc in an unlabelled or
//     text fence between other commands, its delimiter lower-case or its
//     line indented.
func shellFamilies(r testdata.Triple, printed map[patch.Format]string, newCode string, add func(fam, old, text string, want *string)) {
	short := map[patch.Format]string{patch.V4A: "v4a", patch.UDiffH: "udh", patch.UDiffL: "udl"}
	pick := func(vs []string) string { // one spelling a commit
		h := 0
		for _, c := range r.ID {
			h = h*31 + int(c)
		}
		return vs[(h&0x7fffffff)%len(vs)]
	}
	for _, f := range []patch.Format{patch.V4A, patch.UDiffH, patch.UDiffL} {
		p, ok := printed[f]
		if !ok {
			continue
		}
		fs := short[f]
		apply, cmds := "git apply fix.patch", []string{
			"git -C . apply fix.patch", "sh -c 'patch -p1 < fix.patch'", "bash -c \"git apply fix.patch\"",
			"patch -p1 -i fix.patch", "patch -p1 --input=fix.patch", "cat fix.patch | git apply -3",
		}
		if f == patch.V4A {
			apply, cmds = "apply_patch < fix.patch", []string{"sh -c 'apply_patch < fix.patch'", "cat fix.patch | apply_patch", "bash -lc \"apply_patch < fix.patch\""}
		}
		saved := "```bash\ncat > fix.patch <<'EOF'\n" + p + "EOF\n"
		script := saved + "```\n\nAnd a setup script for CI:\n\n```bash\ncat > setup.sh <<'EOF'\n#!/bin/sh\nset -e\n" + apply + "\nEOF\n"
		add(fs+"_heredoc_script", r.OldCode, script+"```\n", nil)
		add(fs+"_heredoc_script_run", r.OldCode, script+"bash setup.sh\n```\n", &newCode)
		add(fs+"_heredoc_prose_before", r.OldCode, "Save this as fix.patch and run `"+apply+"`:\n\n"+saved+"```\n", &newCode)
		add(fs+"_heredoc_cmd", r.OldCode, saved+pick(cmds)+"\n```\n", &newCode)
		if f == patch.V4A {
			add("v4a_apply_patch_bare", r.OldCode, pick([]string{
				"```\ncd /repo\napply_patch <<eof\n" + p + "eof\ngit diff --stat\n```\n",
				"```text\ncd /repo\n  apply_patch <<'EOF'\n" + p + "EOF\ngit status\n```\n",
			}), &newCode)
			continue
		}
		add(fs+"_heredoc_reversed", r.OldCode, "```bash\n"+pick([]string{"git apply -R <<'EOF'", "patch -R -p1 <<'EOF'", "cat <<'EOF' | git apply --reverse"})+"\n"+p+"EOF\n```\n", nil)
		add(fs+"_heredoc_checked", r.OldCode, "```bash\n"+pick([]string{"git apply --check <<'EOF'", "patch -p1 --dry-run <<'EOF'"})+"\n"+p+"EOF\n```\n", nil)
	}
}
