package cmdline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Command is one command: its help, its flags and what it does.
type Command struct {
	// Use is the command's name and then its arguments' synopsis.
	Use string
	// Parent names the command this one is a subcommand of ("env"), in
	// messages and help; empty for a top-level command.
	Parent string
	Short  string
	Long   string
	// Quick marks a command that runs in milliseconds and watches no
	// context: interrupts end it rather than cancel its context.
	Quick bool
	Flags FlagSet
	// Args checks the arguments left after the flags; nil accepts any.
	Args func(args []string) error
	Run  func(ctx context.Context, args []string) error
}

// Name is the command's name, the first word of Use.
func (c *Command) Name() string {
	name, _, _ := strings.Cut(c.Use, " ")
	return name
}

// Parse parses args: the flags, then Args. Errors name the command.
func (c *Command) Parse(args []string) ([]string, error) {
	rest, err := c.Flags.Parse(args)
	if err == ErrHelp {
		return nil, err
	}
	if err == nil && c.Args != nil {
		err = c.Args(rest)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.path(), err)
	}
	return rest, nil
}

// path is the command's name after its parent's ("env restore").
func (c *Command) path() string {
	if c.Parent == "" {
		return c.Name()
	}
	return c.Parent + " " + c.Name()
}

// Help is the command's help as program's subcommand: its long
// description, its synopsis and its flags.
func (c *Command) Help(program string) string {
	var b strings.Builder
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	b.WriteString(strings.TrimSpace(desc))
	use := c.Use
	if c.Parent != "" {
		use = c.Parent + " " + use
	}
	b.WriteString("\n\nUsage:\n  " + program + " " + use)
	if !strings.Contains(c.Use, "[flags]") {
		b.WriteString(" [flags]")
	}
	b.WriteString("\n\nFlags:\n")
	b.WriteString(c.Flags.Usages(c.path()))
	return b.String()
}

// ExactArgs accepts exactly n arguments, described as what in errors
// ("PATCH or -").
func ExactArgs(n int, what string) func([]string) error {
	return func(args []string) error {
		if len(args) != n {
			return fmt.Errorf("want %s (%d argument%s), got %d: %s", what, n, plural(n), len(args), quoteArgs(args))
		}
		return nil
	}
}

// NoArgs accepts no arguments.
func NoArgs(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments, got %s", quoteArgs(args))
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func quoteArgs(args []string) string {
	if len(args) == 0 {
		return "none"
	}
	q := make([]string, 0, min(len(args), 4))
	for i, a := range args {
		if i == 3 {
			q = append(q, "...")
			break
		}
		q = append(q, strconv.Quote(a))
	}
	return strings.Join(q, " ")
}

// Suggest returns the names within two edits of name (a mistyped
// command), closest first.
func Suggest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		if d := distance(strings.ToLower(name), strings.ToLower(n)); d <= 2 || strings.HasPrefix(n, name) && name != "" {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
