package shtemplate

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	for _, c := range []struct {
		name, tmpl string
		vars       Vars
		want       string
	}{
		{"bare values", "cat {file}", Vars{"file": {"a/b.go"}}, "cat a/b.go"},
		{"quoted value", "cat {file}", Vars{"file": {"a b"}}, "cat 'a b'"},
		{"single quote", "cat {file}", Vars{"file": {"it's"}}, `cat 'it'\''s'`},
		{"empty value is one word", "x {v} y", Vars{"v": {""}}, "x '' y"},
		{"list", "pytest {tests}", Vars{"tests": {"a::b", "c d"}}, "pytest a::b 'c d'"},
		{"empty list", "pytest {tests}", Vars{"tests": nil}, "pytest "},
		{"placeholder in a value is not expanded", "{file} {dir}", Vars{"file": {"x/{dir}.txt"}, "dir": {"x"}}, "'x/{dir}.txt' x"},
		{"unknown braces kept", "awk '{print}' {file}", Vars{"file": {"f"}}, "awk '{print}' f"},
		{"double brace", "{{file}}", Vars{"file": {"f"}}, "{f}"},
		{"unclosed", "echo {file", Vars{"file": {"f"}}, "echo {file"},
		{"each occurrence", "{v}{v}", Vars{"v": {"a"}}, "aa"},
		{"equals is quoted", "{v}", Vars{"v": {"PATH=/x"}}, "'PATH=/x'"},
		{"tilde is quoted", "{v}", Vars{"v": {"~root"}}, "'~root'"},
		{"injection", "cat {file}", Vars{"file": {"x;echo INJECTED-$((6*7));y"}}, "cat 'x;echo INJECTED-$((6*7));y'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Expand(c.tmpl, c.vars); got != c.want {
				t.Errorf("Expand(%q) = %q, want %q", c.tmpl, got, c.want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tests/x.py::test_y", "tests/x.py::test_y"},
		{"pkg/sub-dir/a_b.py", "pkg/sub-dir/a_b.py"},
		{"v,@%+", "v,@%+"},
		{"k=v", "'k=v'"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"^(TestA|TestB)$", "'^(TestA|TestB)$'"},
		{"é", "'é'"},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestExpandRaw(t *testing.T) {
	got := ExpandRaw("img:{version}-{id}", Vars{"version": {"1.0"}, "id": {"{version}"}})
	if want := "img:1.0-{version}"; got != want {
		t.Errorf("ExpandRaw = %q, want %q", got, want)
	}
}

// FuzzExpand checks that the shell reads back exactly the values Expand
// put in: `printf '%s\0'` prints each word it is given, so the words of
// {file}, {dir} and {tests} come out one by one, whatever they hold.
func FuzzExpand(f *testing.F) {
	if _, err := exec.LookPath("sh"); err != nil {
		f.Skip("no sh")
	}
	for _, s := range [][3]string{
		{"x;echo INJECTED-$((6*7));y/{dir}.txt", "x;echo INJECTED-$((6*7));y", "a\x01b"},
		{"it's", `"double" \back`, "`id`\x01$(id)"},
		{"new\nline", "{file}", "{tests}\x01{dir}"},
		{"", "-rf", "'\x01''\x01"},
		{"$HOME", "*", "a b\tc"},
		{"~", "a=b", "\\\x01!"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, file, dir, tests string) {
		if strings.ContainsRune(file+dir+tests, 0) {
			t.Skip("a shell word cannot hold NUL")
		}
		var list []string
		if tests != "" {
			list = strings.Split(tests, "\x01")
		}
		script := Expand(`printf '%s\0' {file} {dir} {tests}`, Vars{"file": {file}, "dir": {dir}, "tests": list})
		out, err := exec.Command("sh", "-c", script).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", script, err)
		}
		got := strings.Split(string(out), "\x00")
		got = got[:len(got)-1]
		want := append([]string{file, dir}, list...)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sh -c %q gave other words (-want +got):\n%s", script, diff)
		}
	})
}
