package cmdline

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// vals are the flags of the tests: the kinds and letters of the engine
// commands' flags.
type vals struct {
	dir, format string
	reverse     bool
	check       bool
	strip       int
}

func newSet(v *vals) *FlagSet {
	fs := &FlagSet{}
	fs.String(&v.dir, "directory", 'C', ".", "apply to files under `DIR`")
	fs.String(&v.format, "format", 0, "", "patch format")
	fs.Bool(&v.reverse, "reverse", 'R', false, "apply the patch in reverse")
	fs.Bool(&v.check, "check", 0, false, "check only")
	fs.Int(&v.strip, "strip", 'p', 1, "remove `N` leading path components")
	return fs
}

func newPflag(v *vals) *pflag.FlagSet {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVarP(&v.dir, "directory", "C", ".", "")
	fs.StringVar(&v.format, "format", "", "")
	fs.BoolVarP(&v.reverse, "reverse", "R", false, "")
	fs.BoolVar(&v.check, "check", false, "")
	fs.IntVarP(&v.strip, "strip", "p", 1, "")
	return fs
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want vals
		rest []string
		err  string
	}{
		{[]string{"x.diff"}, vals{dir: ".", strip: 1}, []string{"x.diff"}, ""},
		{[]string{"-C", "d", "--check", "x.diff"}, vals{dir: "d", check: true, strip: 1}, []string{"x.diff"}, ""},
		{[]string{"x.diff", "--directory=d", "-p0"}, vals{dir: "d", strip: 0}, []string{"x.diff"}, ""},
		{[]string{"-Rp2", "-"}, vals{dir: ".", reverse: true, strip: 2}, []string{"-"}, ""},
		{[]string{"-p=3", "-Cdir", "a"}, vals{dir: "dir", strip: 3}, []string{"a"}, ""},
		{[]string{"--check=false", "-R=true", "a"}, vals{dir: ".", reverse: true, strip: 1}, []string{"a"}, ""},
		{[]string{"--format", "--check", "a"}, vals{dir: ".", format: "--check", strip: 1}, []string{"a"}, ""},
		{[]string{"--", "--check", "-R"}, vals{dir: ".", strip: 1}, []string{"--check", "-R"}, ""},
		{[]string{"--strip", "0x10", ""}, vals{dir: ".", strip: 16}, []string{""}, ""},
		{[]string{"--bogus"}, vals{}, nil, "unknown flag --bogus"},
		{[]string{"-Rx"}, vals{}, nil, "unknown flag -x in -Rx"},
		{[]string{"-N"}, vals{}, nil, "unknown flag -N"},
		{[]string{"--strip"}, vals{}, nil, "flag --strip needs a value"},
		{[]string{"-C"}, vals{}, nil, "flag -C needs a value"},
		{[]string{"-p", "one"}, vals{}, nil, `-p "one": want an integer`},
		{[]string{"--check=maybe"}, vals{}, nil, `--check "maybe": want true or false`},
		{[]string{"a", "--help", "--bogus"}, vals{}, nil, "help requested"},
		{[]string{"-Rh"}, vals{}, nil, "help requested"},
	} {
		var v vals
		fs := newSet(&v)
		rest, err := fs.Parse(c.args)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("Parse(%q) error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.args, err)
			continue
		}
		if v != c.want || !slices.Equal(rest, c.rest) {
			t.Errorf("Parse(%q) = %+v %q, want %+v %q", c.args, v, rest, c.want, c.rest)
		}
	}
}

func TestChangedAndRequired(t *testing.T) {
	var v vals
	fs := newSet(&v)
	fs.Require("format")
	if _, err := fs.Parse([]string{"-p", "1", "a"}); err == nil || err.Error() != "required flag --format not given" {
		t.Errorf("missing required flag: %v", err)
	}
	v = vals{}
	fs = newSet(&v)
	if _, err := fs.Parse([]string{"-p", "1"}); err != nil {
		t.Fatal(err)
	}
	if !fs.Changed("strip") || fs.Changed("directory") || fs.Changed("nonesuch") {
		t.Errorf("Changed: strip %v directory %v", fs.Changed("strip"), fs.Changed("directory"))
	}
}

func TestAtLeast(t *testing.T) {
	var v vals
	fs := newSet(&v)
	fs.AtLeast("strip", 0)
	for _, args := range [][]string{{"-p", "-1"}, {"-p-1"}, {"--strip=-3"}} {
		if _, err := fs.Parse(args); err == nil || !strings.HasSuffix(err.Error(), ": want 0 or more") {
			t.Errorf("Parse(%q): %v, want a refusal of the negative value", args, err)
		}
	}
	if _, err := fs.Parse([]string{"-p0"}); err != nil || v.strip != 0 {
		t.Errorf("-p0: %v, strip %d", err, v.strip)
	}
}

func TestCommandArgs(t *testing.T) {
	c := &Command{Use: "apply [flags] PATCH|-", Args: ExactArgs(1, "PATCH or -")}
	if _, err := c.Parse(nil); err == nil || err.Error() != "apply: want PATCH or - (1 argument), got 0: none" {
		t.Errorf("no arguments: %v", err)
	}
	if _, err := c.Parse([]string{"a", "b"}); err == nil || !strings.Contains(err.Error(), `got 2: "a" "b"`) {
		t.Errorf("two arguments: %v", err)
	}
	if _, err := c.Parse([]string{"--help"}); !errors.Is(err, ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	n := &Command{Use: "bench", Args: NoArgs}
	if _, err := n.Parse([]string{"x"}); err == nil || err.Error() != `bench: takes no arguments, got "x"` {
		t.Errorf("NoArgs: %v", err)
	}
}

// TestHelp: the flags sorted by name with -h/--help among them, aligned,
// the back-quoted value names and the non-zero defaults shown.
func TestHelp(t *testing.T) {
	var v vals
	c := &Command{Use: "apply [flags] PATCH|-", Short: "Apply", Long: "Apply a patch.\n"}
	c.Flags = *newSet(&v)
	want := `Apply a patch.

Usage:
  pb apply [flags] PATCH|-

Flags:
      --check           check only
  -C, --directory DIR   apply to files under DIR (default ".")
      --format string   patch format
  -h, --help            help for apply
  -R, --reverse         apply the patch in reverse
  -p, --strip N         remove N leading path components (default 1)
`
	if got := c.Help("pb"); got != want {
		t.Errorf("Help:\n%s\nwant:\n%s", got, want)
	}
	c2 := &Command{Use: "bench --cases FILE", Short: "Bench it"}
	if got := c2.Help("pb"); !strings.HasPrefix(got, "Bench it\n\nUsage:\n  pb bench --cases FILE [flags]\n") {
		t.Errorf("Help without Long or [flags]:\n%s", got)
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"apply", "applybench", "diff", "diffxyz", "repair", "report"}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"aply", []string{"apply"}},
		{"dif", []string{"diff", "diffxyz"}},
		{"repir", []string{"repair", "report"}},
		{"zzzzzz", nil},
	} {
		if got := Suggest(c.in, names); !slices.Equal(got, c.want) {
			t.Errorf("Suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzParseLikePflag: every command line is read as pflag, the parser of
// patchbench-full's other commands and of this binary before, reads it:
// the same flag values and arguments, or an error from both.
func FuzzParseLikePflag(f *testing.F) {
	for _, s := range []string{
		"x.diff", "-C\x00d\x00--check\x00x", "-Rp2\x00-", "--\x00-R", "-p=3\x00-Cdir",
		"--strip\x000x10", "--check=false", "-p", "--format\x00--check", "a\x00-h", "---x", "--=x", "-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		var a, b vals
		ra, errA := newSet(&a).Parse(args)
		rb, errB := func() (rest []string, err error) {
			fs := newPflag(&b)
			err = fs.Parse(args)
			return fs.Args(), err
		}()
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%q: cmdline error %v, pflag error %v", args, errA, errB)
		}
		if errors.Is(errA, ErrHelp) != errors.Is(errB, pflag.ErrHelp) {
			t.Fatalf("%q: cmdline %v, pflag %v", args, errA, errB)
		}
		if errA != nil {
			return
		}
		if a != b || !slices.Equal(ra, rb) && len(ra)+len(rb) > 0 {
			t.Fatalf("%q: cmdline %+v %q, pflag %+v %q", args, a, ra, b, rb)
		}
	})
}
