// Package cmdline parses the command lines of the patch engine's commands
// (apply, diff, convert, repair, applybench, report) and prints their help,
// with the syntax and help layout of the cobra commands of patchbench-full:
// long flags (--name value, --name=value), one-letter flags (-p 1, -p1,
// -p=1, grouped booleans -Rp1), flags anywhere among the arguments, "--"
// ending them, -h/--help.
//
// It exists for start-up time: the patchbench binary, which agents run
// once per edit, links no cobra and no pflag. pflag imports net (its IP
// flag types), which makes a build with cgo link libc dynamically, and
// cobra and pflag initialise regexp, net/netip and text/template at every
// start; together they were a third of a one-hunk apply's start-up
// (docs/startup.md). patchbench-full runs the same Command values, so one
// parser serves both binaries.
package cmdline

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrHelp is returned by Parse when -h or --help is among the flags.
var ErrHelp = errors.New("help requested")

type kind uint8

const (
	kindString kind = iota
	kindBool
	kindInt
)

// Flag is one flag of a FlagSet.
type Flag struct {
	Name  string
	Short byte // 0: none
	Usage string
	kind  kind
	def   string // the default, as text
	str   *string
	b     *bool
	n     *int
	min   *int // an integer flag's least value
	set   bool
}

// TakesValue reports whether the flag needs a value (it is not a boolean).
func (f *Flag) TakesValue() bool { return f.kind != kindBool }

func (f *Flag) assign(text string) error {
	switch f.kind {
	case kindString:
		*f.str = text
	case kindBool:
		v, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		*f.b = v
	case kindInt:
		v, err := strconv.ParseInt(text, 0, strconv.IntSize)
		if err != nil {
			return fmt.Errorf("want an integer")
		}
		if f.min != nil && int(v) < *f.min {
			return fmt.Errorf("want %d or more", *f.min)
		}
		*f.n = int(v)
	}
	f.set = true
	return nil
}

// FlagSet is a command's flags. The zero value is ready to use.
type FlagSet struct {
	flags    []*Flag
	required []string
}

func (fs *FlagSet) add(f *Flag) {
	if f.Name == "help" || f.Short == 'h' || fs.Lookup(f.Name) != nil || (f.Short != 0 && fs.short(f.Short) != nil) {
		panic("cmdline: flag defined twice: " + f.Name)
	}
	fs.flags = append(fs.flags, f)
}

// String defines a string flag: short is its one-letter name or 0.
func (fs *FlagSet) String(p *string, name string, short byte, def, usage string) {
	*p = def
	fs.add(&Flag{Name: name, Short: short, Usage: usage, kind: kindString, def: def, str: p})
}

// Bool defines a boolean flag.
func (fs *FlagSet) Bool(p *bool, name string, short byte, def bool, usage string) {
	*p = def
	fs.add(&Flag{Name: name, Short: short, Usage: usage, kind: kindBool, def: strconv.FormatBool(def), b: p})
}

// Int defines an integer flag.
func (fs *FlagSet) Int(p *int, name string, short byte, def int, usage string) {
	*p = def
	fs.add(&Flag{Name: name, Short: short, Usage: usage, kind: kindInt, def: strconv.Itoa(def), n: p})
}

// AtLeast makes Parse refuse a value of the integer flag name below min.
func (fs *FlagSet) AtLeast(name string, min int) {
	f := fs.Lookup(name)
	if f == nil || f.kind != kindInt {
		panic("cmdline: no integer flag " + name)
	}
	f.min = &min
}

// Require makes Parse fail unless the flag name is given.
func (fs *FlagSet) Require(name string) {
	if fs.Lookup(name) == nil {
		panic("cmdline: no flag " + name)
	}
	fs.required = append(fs.required, name)
}

// Lookup returns the flag called name, or nil.
func (fs *FlagSet) Lookup(name string) *Flag {
	for _, f := range fs.flags {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (fs *FlagSet) short(c byte) *Flag {
	for _, f := range fs.flags {
		if f.Short == c {
			return f
		}
	}
	return nil
}

// Changed reports whether the flag name was given on the command line.
func (fs *FlagSet) Changed(name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.set
}

// Flags are the flags, sorted by name.
func (fs *FlagSet) Flags() []*Flag {
	out := slices.Clone(fs.flags)
	slices.SortFunc(out, func(a, b *Flag) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Parse sets the flags found in args and returns the other arguments in
// order. Flags may come anywhere before "--"; "-" alone is an argument.
// It returns ErrHelp for -h or --help, and an error naming the argument
// for an unknown flag, a missing or bad value, or a required flag not
// given.
func (fs *FlagSet) Parse(args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return fs.done(append(rest, args[i+1:]...))
		case len(a) < 2 || a[0] != '-':
			rest = append(rest, a)
		case a[1] == '-':
			name, val, hasVal := strings.Cut(a[2:], "=")
			if name == "help" {
				return nil, ErrHelp
			}
			f := fs.Lookup(name)
			if f == nil || name == "" {
				return nil, fmt.Errorf("unknown flag %s", flagText(a))
			}
			if !hasVal {
				if f.kind == kindBool {
					val = "true"
				} else if i+1 < len(args) {
					i++
					val = args[i]
				} else {
					return nil, fmt.Errorf("flag --%s needs a value", name)
				}
			}
			if err := f.assign(val); err != nil {
				return nil, fmt.Errorf("--%s %q: %w", name, val, err)
			}
		default:
			consumed, err := fs.parseShorts(a, args[i+1:])
			if err != nil {
				return nil, err
			}
			i += consumed
		}
	}
	return fs.done(rest)
}

// parseShorts sets the one-letter flags of a ("-Rp1", "-C", "-p=1"),
// taking a value from next when the last one needs it; it returns how
// many of next it used.
func (fs *FlagSet) parseShorts(a string, next []string) (int, error) {
	for j := 1; j < len(a); j++ {
		c := a[j]
		if c == 'h' {
			return 0, ErrHelp
		}
		f := fs.short(c)
		if f == nil {
			if len(a) == 2 {
				return 0, fmt.Errorf("unknown flag %s", flagText(a))
			}
			return 0, fmt.Errorf("unknown flag -%s in %s", string(rune(c)), flagText(a))
		}
		val, tail := "", a[j+1:]
		switch {
		case len(tail) > 1 && tail[0] == '=': // "-p=1"; "-C=" is "=" for -C, as pflag reads it
			val = tail[1:]
		case f.kind == kindBool:
			if err := f.assign("true"); err != nil {
				return 0, err
			}
			continue
		case tail != "":
			val = tail
		case len(next) > 0:
			if err := f.assign(next[0]); err != nil {
				return 0, fmt.Errorf("-%c %q: %w", c, next[0], err)
			}
			return 1, nil
		default:
			return 0, fmt.Errorf("flag -%c needs a value", c)
		}
		if err := f.assign(val); err != nil {
			return 0, fmt.Errorf("-%c %q: %w", c, val, err)
		}
		return 0, nil
	}
	return 0, nil
}

func (fs *FlagSet) done(rest []string) ([]string, error) {
	var missing []string
	for _, name := range fs.required {
		if !fs.Changed(name) {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("required flag %s not given", strings.Join(missing, ", "))
	}
	return rest, nil
}

// flagText quotes a command-line argument for a message when it is long
// or holds odd characters.
func flagText(a string) string {
	if len(a) > 64 {
		a = a[:64] + "..."
	}
	q := strconv.Quote(a)
	if q[1:len(q)-1] == a && !strings.ContainsAny(a, " \t") {
		return a
	}
	return q
}

// Usages lays the flags out for help, one a line, sorted by name, with
// -h/--help among them: the flag, its value's name (the back-quoted word
// of its usage, else its type), its usage and any default that is not the
// zero value.
func (fs *FlagSet) Usages(command string) string {
	type line struct{ left, right string }
	var lines []line
	flags := append(fs.Flags(), &Flag{Name: "help", Short: 'h', Usage: "help for " + command, kind: kindBool, def: "false"})
	slices.SortStableFunc(flags, func(a, b *Flag) int { return strings.Compare(a.Name, b.Name) })
	width := 0
	for _, f := range flags {
		left := "      --" + f.Name
		if f.Short != 0 {
			left = "  -" + string(rune(f.Short)) + ", --" + f.Name
		}
		name, usage := f.Help()
		if name != "" {
			left += " " + name
		}
		switch {
		case f.kind == kindString && f.def != "":
			usage += fmt.Sprintf(" (default %q)", f.def)
		case f.kind == kindInt && f.def != "0", f.kind == kindBool && f.def != "false":
			usage += " (default " + f.def + ")"
		}
		width = max(width, len(left))
		lines = append(lines, line{left, usage})
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.left)
		b.WriteString(strings.Repeat(" ", width-len(l.left)+3))
		b.WriteString(l.right)
		b.WriteByte('\n')
	}
	return b.String()
}

// Help is the name of the flag's value in help (its usage's back-quoted
// word, else its type; none for a boolean) and its usage with the back
// quotes removed.
func (f *Flag) Help() (value, usage string) {
	if i := strings.IndexByte(f.Usage, '`'); i >= 0 {
		if j := strings.IndexByte(f.Usage[i+1:], '`'); j >= 0 {
			value = f.Usage[i+1 : i+1+j]
			return value, f.Usage[:i] + value + f.Usage[i+2+j:]
		}
	}
	switch f.kind {
	case kindString:
		return "string", f.Usage
	case kindInt:
		return "int", f.Usage
	}
	return "", f.Usage
}
