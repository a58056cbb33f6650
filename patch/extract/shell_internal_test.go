package extract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShellUses: what each command line does with patches, as the shell
// runs it: the file (or "<<k", heredoc k of the line) and the mode.
func TestShellUses(t *testing.T) {
	type use struct {
		File string
		Mode applyMode
	}
	tests := []struct {
		line string
		want []use
	}{
		{"git apply fix.patch", []use{{"fix.patch", modeApply}}},
		{"git -C repo -c core.x=1 apply -v fix.patch", []use{{"fix.patch", modeApply}}},
		{"git apply -R fix.patch", []use{{"fix.patch", modeReverse}}},
		{"git apply -p1 --check fix.patch", []use{{"fix.patch", modeCheck}}},
		{"git apply --stat --apply <<EOF", []use{{"<<0", modeApply}}},
		{"git apply --exclude foo.py a.patch b.patch", []use{{"a.patch", modeApply}, {"b.patch", modeApply}}},
		{"cat <<'EOF' | git apply -3", []use{{"<<0", modeApply}}},
		{"cat fix.patch | git apply -", []use{{"fix.patch", modeApply}}},
		{"cat <<A > x; git apply < y", []use{{"y", modeApply}}},
		{"patch -p1 < fix.patch", []use{{"fix.patch", modeApply}}},
		{"patch -p 1 -i fix.patch", []use{{"fix.patch", modeApply}}},
		{"patch -Rp1 --input=fix.patch", []use{{"fix.patch", modeReverse}}},
		{"patch --dry-run -p1 <<'EOF'", []use{{"<<0", modeCheck}}},
		{"patch hello.txt fix.patch", []use{{"fix.patch", modeApply}}},
		{"sudo FOO=1 patch -p0 2>/dev/null <<EOF", []use{{"<<0", modeApply}}},
		{"sh -c 'patch -p1 < fix.patch'", []use{{"fix.patch", modeApply}}},
		{"bash -lc \"git apply -R fix.patch\"", []use{{"fix.patch", modeReverse}}},
		{"bash -c 'git apply' <<EOF", []use{{"<<0", modeApply}}},
		{"apply_patch <<'EOF'", []use{{"<<0", modeApply}}},
		{"python3 apply_patch.py < f.txt", []use{{"f.txt", modeApply}}},
		{"patchbench apply -R -C dir fix.patch", []use{{"fix.patch", modeReverse}}},
		{"echo 'git apply fix.patch'", nil},
		{"git status # git apply fix.patch", nil},
		{"git log --grep apply", nil},
	}
	for _, tt := range tests {
		sl := parseShell(tt.line)
		var got []use
		for i := range sl.cmds {
			uses, _ := cmdUses(sl, i, 0)
			for _, u := range uses {
				got = append(got, use{u.file, u.mode})
			}
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: uses (-want +got):\n%s", tt.line, d)
		}
	}
}

// TestHeredocWritesFiles: the files a line saves each heredoc to.
func TestHeredocWritesFiles(t *testing.T) {
	tests := []struct {
		line string
		want [][]string // per heredoc
	}{
		{"cat > fix.patch <<'EOF'", [][]string{{"fix.patch"}}},
		{"cat <<EOF >> notes.diff", [][]string{{"notes.diff"}}},
		{"tee -a a.diff b.diff <<EOF >/dev/null", [][]string{{"a.diff", "b.diff", "/dev/null"}}},
		{"cat <<EOF | tee fix.patch | git apply", [][]string{{"fix.patch"}}},
		{"cat <<A > a.txt; cat <<-B > b.txt", [][]string{{"a.txt"}, {"b.txt"}}},
		{"cat > x <<\\EOF", [][]string{{"x"}}},
		{"git apply <<EOF", [][]string{nil}},
		{"cat old.txt > new.txt <<EOF", [][]string{nil}},
	}
	for _, tt := range tests {
		sl := parseShell(tt.line)
		var got [][]string
		for k := range sl.docs {
			got = append(got, sl.heredocWrites(k))
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: files (-want +got):\n%s", tt.line, d)
		}
	}
}

// FuzzParseShell: any line parses, and every heredoc feeds a command of
// the line.
func FuzzParseShell(f *testing.F) {
	for _, s := range []string{"cat > f <<'EOF' && git apply f", "a <<-B | c <<C", "x \"y\\\"z\" $(a (b)) `c` 2>&1 <<", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		sl := parseShell(line)
		for k, d := range sl.docs {
			if d.cmd < 0 || d.cmd >= len(sl.cmds) {
				t.Fatalf("heredoc %d feeds command %d of %d", k, d.cmd, len(sl.cmds))
			}
			sl.heredocWrites(k)
		}
		for i := range sl.cmds {
			cmdUses(sl, i, 0)
		}
	})
}
