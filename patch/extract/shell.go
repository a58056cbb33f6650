package extract

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// A line of shell, parsed enough to tell where each heredoc goes and
// which commands apply a patch: words with their quotes removed,
// operators, redirections and heredoc delimiters. No expansion, no
// control structures: a keyword such as "then" is a command word like
// any other.

// shWord is a word of a shell line, its quotes removed.
type shWord struct {
	text   string
	quoted bool // some part of it was quoted (a quoted heredoc delimiter)
	op     bool // an operator: ; && || | |& & ( ) or a redirection
}

// shLex splits line into words and operators. A comment ends it; "$(...)"
// and backquotes stay inside their word.
func shLex(line string) []shWord {
	var out []shWord
	var b strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			out = append(out, shWord{text: b.String(), quoted: quoted})
		}
		b.Reset()
		inWord, quoted = false, false
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			flush()
			i++
		case c == '#' && !inWord:
			return out
		case c == '\'':
			inWord, quoted = true, true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			b.WriteString(line[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			inWord, quoted = true, true
			i++
			for i < len(line) && line[i] != '"' {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				b.WriteByte(line[i])
				i++
			}
			i++
		case c == '\\':
			if i+1 < len(line) { // a backslash ending the line continues it
				inWord, quoted = true, true
				b.WriteByte(line[i+1])
			}
			i += 2
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			// A command substitution is part of the word.
			inWord = true
			depth, j := 0, i+1
			for ; j < len(line); j++ {
				if line[j] == '(' {
					depth++
				} else if line[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			j = min(j+1, len(line))
			b.WriteString(line[i:j])
			i = j
		case c == '`':
			inWord = true
			j := len(line)
			if k := strings.IndexByte(line[i+1:], '`'); k >= 0 {
				j = i + 1 + k + 1
			}
			b.WriteString(line[i:j])
			i = j
		case strings.IndexByte(";&|()<>", c) >= 0:
			// A word of digits right before a redirection is its file
			// descriptor ("2>"), not an argument.
			if (c == '<' || c == '>') && inWord && !quoted && isDigits(b.String()) {
				b.Reset()
				inWord = false
			}
			flush()
			op := shOp(line[i:])
			out = append(out, shWord{text: op, op: true})
			i += len(op)
		default:
			inWord = true
			b.WriteByte(c)
			i++
		}
	}
	flush()
	return out
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// shOps are the operators, longest first.
var shOps = []string{"<<<", "<<-", "&&", "||", ";;", "|&", "<<", "<>", "<&", ">>", ">&", ">|", "&>", ";", "&", "|", "(", ")", "<", ">"}

func shOp(s string) string {
	for _, op := range shOps {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return s[:1]
}

// shHeredoc is a heredoc operator of a line.
type shHeredoc struct {
	delim string
	tabs  bool // <<-: leading tabs of the body and delimiter line are removed
	cmd   int  // the index of the command it feeds, in shLine.cmds
}

// shCmd is a simple command of a line.
type shCmd struct {
	argv   []string
	in     string   // the file of "< F"
	out    []string // the files of "> F" and ">> F"
	doc    int      // the heredoc that is its standard input, -1 if none
	piped  bool     // its standard output goes to the next command
	prefix bool     // after "|" (its standard input is the command before's output)
}

// shLine is a parsed line of shell.
type shLine struct {
	cmds []shCmd
	docs []shHeredoc
}

// parseShell parses one line of shell.
func parseShell(line string) shLine {
	var sl shLine
	cur := shCmd{doc: -1}
	pipedIn := false
	end := func(piped bool) {
		if len(cur.argv) > 0 || cur.doc >= 0 || cur.in != "" || len(cur.out) > 0 {
			cur.piped, cur.prefix = piped, pipedIn
			sl.cmds = append(sl.cmds, cur)
			pipedIn = piped
		} else if !piped {
			pipedIn = false
		}
		cur = shCmd{doc: -1}
	}
	words := shLex(line)
	for k := 0; k < len(words); k++ {
		w := words[k]
		if !w.op {
			cur.argv = append(cur.argv, w.text)
			continue
		}
		var target *shWord
		if k+1 < len(words) && !words[k+1].op {
			target = &words[k+1]
		}
		switch w.text {
		case "|", "|&":
			end(true)
		case ";", "&&", "||", "&", ";;", "(", ")":
			end(false)
		case "<<", "<<-":
			if target != nil {
				cur.doc = len(sl.docs)
				sl.docs = append(sl.docs, shHeredoc{delim: target.text, tabs: w.text == "<<-", cmd: len(sl.cmds)})
				k++
			}
		case "<":
			if target != nil {
				cur.in, cur.doc = target.text, -1
				k++
			}
		case ">", ">>", ">|", "&>":
			if target != nil {
				cur.out = append(cur.out, target.text)
				k++
			}
		case "<<<", "<>", "<&", ">&":
			if target != nil {
				k++
			}
		}
	}
	end(false)
	return sl
}

// An applier's reading of a patch.
type applyMode int

const (
	modeApply   applyMode = iota + 1 // applies it
	modeReverse                      // applies it in reverse (-R)
	modeCheck                        // writes nothing (--check, --dry-run, --stat)
)

// patchUse is what a command does with a patch: its source (a file, or ""
// for its standard input) and how.
type patchUse struct {
	file string
	mode applyMode
	how  string // the command, for a reason: "git apply -R"
}

// maxShellDepth bounds "sh -c" inside "sh -c".
const maxShellDepth = 3

// applier returns what cmd, from its word at, does with the patches it
// applies: git apply and git am, GNU patch, codex's apply_patch,
// patchbench apply, and "sh -c" running one of those. ok is false for any
// other command.
func applier(argv []string, depth int) (uses []patchUse, ok bool) {
	// Words before the command: assignments and wrappers.
	for len(argv) > 0 {
		w := argv[0]
		if k := strings.IndexByte(w, '='); k > 0 && !strings.HasPrefix(w, "-") {
			argv = argv[1:]
			continue
		}
		switch w {
		case "sudo", "command", "exec", "time", "env", "nohup", "$", "%":
			argv = argv[1:]
			continue
		}
		break
	}
	if len(argv) == 0 {
		return nil, false
	}
	name := path.Base(argv[0])
	args := argv[1:]
	switch name {
	case "git":
		return gitApply(args)
	case "patch":
		return gnuPatch(args), true
	case "apply_patch", "apply_patch.py", "apply_patch.sh":
		return []patchUse{{mode: modeApply, how: "apply_patch"}}, true
	case "python", "python3", "node", "sh", "bash", "zsh", "dash", "ksh":
		if len(args) > 0 && strings.HasPrefix(path.Base(args[0]), "apply_patch") {
			return []patchUse{{mode: modeApply, how: "apply_patch"}}, true
		}
		if name == "python" || name == "python3" || name == "node" || depth >= maxShellDepth {
			return nil, false
		}
		// sh -c 'patch -p1 < fix.patch', bash -lc "git apply fix.patch".
		for k, a := range args {
			if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, "c") && k+1 < len(args) {
				sl := parseShell(args[k+1])
				for i := range sl.cmds {
					u, ok := cmdUses(sl, i, depth+1)
					if !ok {
						continue
					}
					for _, x := range u {
						if strings.HasPrefix(x.file, "<<") {
							x.file = "<<?" // a heredoc of the string, none of the line's
						}
						uses = append(uses, x)
					}
				}
				return uses, len(uses) > 0
			}
		}
		return nil, false
	case "patchbench":
		if len(args) > 0 && args[0] == "apply" {
			o := readOpts(args[1:], "Cp", "--directory", "--strip", "--format", "--target")
			return o.uses(o.operands, "patchbench apply", o.has("-R", "--reverse"), o.has("--check", "--dry-run")), true
		}
	}
	return nil, false
}

// gitApply reads git's global options and its apply or am command.
func gitApply(args []string) ([]patchUse, bool) {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			args = args[min(2, len(args)):]
			continue
		case strings.HasPrefix(a, "-"):
			args = args[1:]
			continue
		}
		break
	}
	if len(args) == 0 || (args[0] != "apply" && args[0] != "am") {
		return nil, false
	}
	long := []string{"--directory", "--exclude", "--include", "--whitespace", "--build-fake-ancestor"}
	if args[0] == "am" {
		o := readOpts(args[1:], "pC", long...)
		return o.uses(o.operands, "git am", "", ""), true
	}
	o := readOpts(args[1:], "pC", long...)
	check := o.has("--check", "--stat", "--numstat", "--summary")
	if _, ok := o.flags["--apply"]; ok {
		check = "" // --stat --apply applies
	}
	if c := o.has("--cached"); c != "" {
		check = c // the index alone, not the files
	}
	return o.uses(o.operands, "git apply", o.has("-R", "--reverse"), check), true
}

// gnuPatch reads GNU patch's options: the patch is -i F, --input=F, the
// second operand, or standard input.
func gnuPatch(args []string) []patchUse {
	o := readOpts(args, "pdDFBVYzrgoi", "--strip", "--directory", "--fuzz", "--prefix", "--suffix", "--input", "--output", "--basename-prefix", "--reject-file", "--quoting-style")
	input := o.flags["-i"] + o.flags["--input"]
	if input == "" && len(o.operands) > 1 {
		input = o.operands[1]
	}
	check := o.has("--dry-run")
	if out := o.has("-o", "--output"); out != "" {
		check = out // the result goes to another file, not the one the patch names
	}
	return o.uses([]string{input}, "patch", o.has("-R", "--reverse"), check)
}

// opts are a command's options, by name ("-R", "--input"), with their
// values, and its operands.
type opts struct {
	flags    map[string]string
	operands []string
}

// readOpts reads args: argLetters are the short options that take a
// value (-p1, -p 1), argLong the long ones (--input F, --input=F).
func readOpts(args []string, argLetters string, argLong ...string) opts {
	o := opts{flags: map[string]string{}}
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case a == "--":
			o.operands = append(o.operands, args[k+1:]...)
			return o
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a, "=")
			if !hasVal && slices.Contains(argLong, name) && k+1 < len(args) {
				k++
				val = args[k]
			}
			o.flags[name] = val
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				name := "-" + a[j:j+1]
				if strings.IndexByte(argLetters, a[j]) < 0 {
					o.flags[name] = ""
					continue
				}
				val := a[j+1:]
				if val == "" && k+1 < len(args) {
					k++
					val = args[k]
				}
				o.flags[name] = val
				break
			}
		default:
			o.operands = append(o.operands, a)
		}
	}
	return o
}

// has returns the first of names given, or "".
func (o opts) has(names ...string) string {
	for _, n := range names {
		if _, ok := o.flags[n]; ok {
			return n
		}
	}
	return ""
}

// uses is what a command applying files does: in reverse when the
// option reverse is given, nothing when check is; none, or "-", is its
// standard input.
func (o opts) uses(files []string, how, reverse, check string) []patchUse {
	mode := modeApply
	switch {
	case reverse != "":
		mode, how = modeReverse, how+" -R"
	case check != "":
		mode, how = modeCheck, how+" "+check
	}
	if len(files) == 0 {
		files = []string{""}
	}
	uses := make([]patchUse, len(files))
	for k, f := range files {
		if f == "-" {
			f = ""
		}
		uses[k] = patchUse{file: f, mode: mode, how: how}
	}
	return uses
}

// cmdUses is what command i of line sl does with patches, its standard
// input resolved (see stdin).
func cmdUses(sl shLine, i, depth int) ([]patchUse, bool) {
	uses, ok := applier(sl.cmds[i].argv, depth)
	if !ok {
		return nil, false
	}
	for k := range uses {
		if uses[k].file == "" {
			uses[k].file = sl.stdin(i)
		}
	}
	return uses, true
}

// heredocName is the name stdin gives heredoc k of a line.
func heredocName(k int) string { return "<<" + strconv.Itoa(k) }

// stdin names the standard input of command i: "<<k" for heredoc k of
// the line, a file ("< F"), what the command before it in a pipeline
// passes on ("cat F | git apply"), or "" when it is none of those.
func (sl shLine) stdin(i int) string {
	c := sl.cmds[i]
	switch {
	case c.doc >= 0:
		return heredocName(c.doc)
	case c.in != "":
		return c.in
	case c.prefix && i > 0:
		return sl.stdout(i - 1)
	}
	return ""
}

// stdout names what command i passes on to a pipe: cat its one file or
// its input, tee its input; "" for any other command.
func (sl shLine) stdout(i int) string {
	c := sl.cmds[i]
	if len(c.argv) == 0 || len(c.out) > 0 {
		return ""
	}
	switch path.Base(c.argv[0]) {
	case "cat":
		if files := operands(c.argv[1:]); len(files) == 1 && files[0] != "-" {
			return files[0]
		} else if len(files) > 0 && files[0] != "-" {
			return ""
		}
	case "tee":
	default:
		return ""
	}
	return sl.stdin(i)
}

// heredocWrites returns the files the line writes heredoc k to: "cat > F
// <<EOF", "tee F <<EOF", "<<EOF > F", and the same through a pipe ("cat
// <<EOF | tee F").
func (sl shLine) heredocWrites(k int) []string {
	var files []string
	for i, c := range sl.cmds {
		if sl.stdin(i) != heredocName(k) {
			continue
		}
		name := ""
		if len(c.argv) > 0 {
			name = path.Base(c.argv[0])
		}
		switch name {
		case "cat":
			if ops := operands(c.argv[1:]); len(ops) > 0 && ops[0] != "-" {
				continue // cat F prints F, not its input
			}
			files = append(files, c.out...)
		case "tee":
			files = append(files, operands(c.argv[1:])...)
			files = append(files, c.out...)
		case "":
			files = append(files, c.out...)
		}
	}
	return files
}

// operands returns the words of args that are no options.
func operands(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "-" || !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// shellLines marks the input lines (1-based) that are lines of shell: in
// a fence of shell or without a label, or in a heredoc's body. Other
// lines are prose, whose commands are in backquotes or among its words.
func shellLines(cands []*cand, n int) []bool {
	out := make([]bool, n+1)
	for _, c := range cands {
		if c.Kind != "fence" || shownAs(c) != runs && shownAs(c) != generic {
			continue
		}
		for k := c.StartLine + 1; k < c.EndLine && k <= n; k++ {
			out[k] = true
		}
		if c.note != "" && c.EndLine <= n {
			out[c.EndLine] = true // unterminated: its last line is content
		}
	}
	return out
}

// heredocFate says why heredoc h is no edit the answer makes, or "" when
// it is one: the shell line feeds it to an applier that reverses it or
// writes nothing (git apply -R, --check; patch -R, --dry-run), or saves it
// to a file that no command after it applies (a fixture), or that one
// only applies in reverse. A heredoc fed to an applier, or saved to a
// file that a later command (or the prose before its fence: "Save this
// as fix.patch and run `git apply fix.patch`") applies, is the answer's
// edit, and so is one going anywhere else, as before these rules.
func heredocFate(lines []string, h *cand, inTop, shellLine []bool) string {
	sl := parseShell(bare(lines[h.shell-1]))
	if h.doc >= len(sl.docs) {
		return ""
	}
	in := heredocName(h.doc)
	for i := range sl.cmds {
		uses, _ := cmdUses(sl, i, 0)
		for _, u := range uses {
			if u.file == in {
				if u.mode == modeApply {
					return ""
				}
				return "which " + modeWhy(u)
			}
		}
	}
	files := sl.heredocWrites(h.doc)
	if len(files) == 0 {
		return ""
	}
	base := map[string]bool{}
	for _, f := range files {
		base[path.Base(f)] = true
	}
	named := func(f string) bool {
		return f != "" && !strings.HasPrefix(f, "<<") && base[path.Base(f)]
	}
	// The uses of the file by the answer's shell, and by its prose.
	var inShell, inProse []patchUse
	see := func(uses []patchUse, shell bool) {
		for _, u := range uses {
			if named(u.file) {
				if shell {
					inShell = append(inShell, u)
				} else {
					inProse = append(inProse, u)
				}
			}
		}
	}
	// The commands after its own on its line, then the lines after it,
	// until a command writes the file again: bodies of heredocs left
	// out, they are data, not commands, unless a later command runs the
	// script they write ("bash setup.sh").
	scripts := map[string][2]int{} // a script's name: its body's lines
	replaced, ran := false, false
	var walk func(from, to int, shell func(int) bool, depth int)
	seeLine := func(sl shLine, from int, depth int) {
		for i := from; i < len(sl.cmds) && !replaced; i++ {
			u, _ := cmdUses(sl, i, 0)
			see(u, true)
			// The heredoc is a script the shell runs: its commands
			// decide (a heredoc inside it fed to git apply is the edit).
			ran = ran || base[ranScript(sl.cmds[i].argv)]
			if body, ok := scripts[ranScript(sl.cmds[i].argv)]; ok && depth == 0 {
				walk(body[0], body[1], func(int) bool { return true }, depth+1)
			}
			replaced = slices.ContainsFunc(sl.cmdWrites(i), named)
		}
	}
	walk = func(from, to int, shell func(int) bool, depth int) {
		for n := from; n <= to && !replaced; n++ {
			l := bare(lines[n-1])
			var sl shLine
			if shell(n) {
				for strings.HasSuffix(l, "\\") && n < to && shell(n+1) {
					n++ // continued: "git apply \" then "  fix.patch"
					l = l[:len(l)-1] + " " + bare(lines[n-1])
				}
				sl = parseShell(l)
				seeLine(sl, 0, depth)
			} else {
				// Prose counts; code of another language does not: a
				// test that applies the fixture it saves runs nothing
				// here.
				if !inTop[n] {
					see(proseUses(l), false)
				}
				sl = parseShell(strings.ReplaceAll(l, "`", " "))
			}
			n = bodiesEnd(lines, n, sl, scripts)
		}
	}
	seeLine(sl, sl.docs[h.doc].cmd+1, 0)
	walk(bodiesEnd(lines, h.shell, sl, scripts)+1, len(lines), func(n int) bool { return shellLine[n] }, 0)
	// Prose before the structure that holds it: "Save this as fix.patch
	// and run `git apply fix.patch`:".
	top := h
	for top.parent != nil {
		top = top.parent
	}
	for n := 1; n < top.StartLine; n++ {
		if !inTop[n] {
			see(proseUses(bare(lines[n-1])), false)
		}
	}
	if ran {
		return ""
	}
	// The shell's own commands decide before the prose: applied, or
	// applied in reverse only; a check alone leaves it to the prose.
	for _, uses := range [][]patchUse{inShell, inProse} {
		var reverse *patchUse
		for k, u := range uses {
			switch u.mode {
			case modeApply:
				return ""
			case modeReverse:
				reverse = &uses[k]
			}
		}
		if reverse != nil {
			return "which writes " + files[0] + ", which " + modeWhy(*reverse)
		}
	}
	return "which writes " + files[0] + " and nothing applies it: a file the answer writes, not an edit"
}

// cmdWrites returns the files command i writes: its redirections, and
// tee's operands.
func (sl shLine) cmdWrites(i int) []string {
	c := sl.cmds[i]
	out := c.out
	if len(c.argv) > 0 && path.Base(c.argv[0]) == "tee" {
		out = append(out, operands(c.argv[1:])...)
	}
	return out
}

// modeWhy says why a use of a patch is no edit, "" for an apply.
func modeWhy(u patchUse) string {
	switch u.mode {
	case modeReverse:
		return "`" + u.how + "` applies in reverse: not the edit as written"
	case modeCheck:
		return "`" + u.how + "` writes none of the files the patch names: not an edit"
	}
	return ""
}

// bodiesEnd returns the last line (1-based) of the heredoc bodies that
// shell line n opens (sl, its parse), each ending at its delimiter line;
// n when it opens none, or a delimiter line is missing. The bodies
// written to files are recorded in scripts, by the files' base names.
func bodiesEnd(lines []string, n int, sl shLine, scripts map[string][2]int) int {
	at := n
	for k, d := range sl.docs {
		end := -1
		for j := at + 1; j <= len(lines); j++ {
			if strings.TrimSpace(lines[j-1]) == d.delim {
				end = j
				break
			}
		}
		if end < 0 {
			break
		}
		if scripts != nil {
			for _, f := range sl.heredocWrites(k) {
				scripts[path.Base(f)] = [2]int{at + 1, end - 1}
			}
		}
		at = end
	}
	return at
}

// ranScript returns the base name of the script a command runs ("sh
// setup.sh", "bash -e setup.sh", "./setup.sh", "source setup.sh"), or "".
func ranScript(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	switch path.Base(argv[0]) {
	case "sh", "bash", "zsh", "dash", "ksh", "source", ".":
		for _, a := range argv[1:] {
			if !strings.HasPrefix(a, "-") {
				return path.Base(a)
			}
			if strings.HasSuffix(a, "c") && a[1] != '-' {
				return "" // sh -c STRING
			}
		}
		return ""
	}
	if strings.Contains(argv[0], "/") {
		return path.Base(argv[0])
	}
	return ""
}

// proseUses finds the patches a line of prose applies: in its backquoted
// spans ("run `git apply fix.patch`"), or among its words ("then run git
// apply fix.patch."), a command starting at any word.
func proseUses(l string) []patchUse {
	var uses []patchUse
	if strings.Count(l, "`") >= 2 {
		parts := strings.Split(l, "`")
		for k := 1; k < len(parts)-1; k += 2 {
			sl := parseShell(parts[k])
			for i := range sl.cmds {
				u, _ := cmdUses(sl, i, 0)
				uses = append(uses, u...)
			}
		}
	}
	// Words of prose: "run git apply fix.patch.", "(patch -p1 < fix.patch)".
	words := strings.Fields(strings.ReplaceAll(l, "`", " "))
	for k, w := range words {
		words[k] = strings.Trim(w, ".,:;!?()\"'")
	}
	for k, w := range words {
		switch w {
		case "git", "patch", "apply_patch", "patchbench":
			// Prose has no pipes, redirections aside: "patch -p1 < fix.patch".
			sl := parseShell(strings.Join(words[k:], " "))
			if len(sl.cmds) > 0 {
				u, _ := cmdUses(sl, 0, 0)
				uses = append(uses, u...)
			}
		}
	}
	return uses
}
