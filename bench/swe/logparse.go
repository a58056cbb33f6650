package swe

import (
	"regexp"
	"slices"
	"strings"
)

// A logParser reads a test log into test statuses the way one of
// SWE-bench's log parsers does, so that grading gives its verdicts: the same
// test names (even where a name was cut at a space), and, for a test
// reported twice, the last report.
type logParser func(log string) map[string]string

var logParsers = map[string]logParser{
	"pytest":         parsePytest,
	"pytest_options": parsePytestOptions,
	"pytest_v2":      parsePytestV2,
	"django":         parseDjango,
	"sympy":          parseSympy,
	"seaborn":        parseSeaborn,
	"matplotlib":     parseMatplotlib,
	"auto": func(log string) map[string]string {
		st, _ := ParseTestOutput(log)
		return st
	},
}

// ParserNames lists the log parsers a spec can name.
func ParserNames() []string {
	var names []string
	for n := range logParsers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ParseLog reads log with the named parser (see [Spec]); ok is false for an
// unknown name.
func ParseLog(parser, log string) (statuses map[string]string, ok bool) {
	p := logParsers[parser]
	if p == nil {
		return nil, false
	}
	return p(log), true
}

// The statuses SWE-bench's parsers recognise at the start of a line.
const statusAlt = `FAILED|PASSED|SKIPPED|ERROR|XFAIL`

var (
	pytestStatusFirst = regexp.MustCompile(`^(` + statusAlt + `)\s+(\S+)`)
	pytestTestFirst   = regexp.MustCompile(`^(\S+)\s+(` + statusAlt + `)(?:\s|$)`)
	pytestSkipCount   = regexp.MustCompile(`^\[\d+\]`)
)

// pytestLine reads one line of pytest -rA output: "STATUS name ..." (the
// name is the second word, even where a parametrization holds a space, as
// in the official harness) or "name STATUS".
func pytestLine(line string) (name, status string, ok bool) {
	if m := pytestStatusFirst.FindStringSubmatch(line); m != nil {
		status, name = m[1], m[2]
		if status == TestFailed {
			name = strings.Fields(strings.ReplaceAll(line, " - ", " "))[1]
		}
		if status == TestSkipped && pytestSkipCount.MatchString(name) {
			return "", "", false
		}
		return name, status, true
	}
	if m := pytestTestFirst.FindStringSubmatch(line); m != nil {
		return m[1], m[2], true
	}
	return "", "", false
}

func parsePytestWith(log string, clean, rename func(string) string) map[string]string {
	st := map[string]string{}
	for _, line := range strings.Split(log, "\n") {
		if clean != nil {
			line = clean(line)
		}
		if name, status, ok := pytestLine(line); ok {
			if rename != nil {
				name = rename(name)
			}
			st[name] = status
		}
	}
	return st
}

func parsePytest(log string) map[string]string { return parsePytestWith(log, nil, nil) }

var pytestOption = regexp.MustCompile(`^(.*?)\[(.*)\]`)

// parsePytestOptions shortens a parametrization that is an absolute path to
// its last element, as the official parser for requests, pylint and pydicom
// does.
func parsePytestOptions(log string) map[string]string {
	return parsePytestWith(log, nil, func(name string) string {
		m := pytestOption.FindStringSubmatch(name)
		if m == nil {
			return name
		}
		opt := m[2]
		if strings.HasPrefix(opt, "/") && !strings.HasPrefix(opt, "//") && !strings.Contains(opt, "*") {
			opt = "/" + opt[strings.LastIndexByte(opt, '/')+1:]
		}
		return m[1] + "[" + opt + "]"
	})
}

var ansiColour = regexp.MustCompile(`\[(\d+)m`)

// parsePytestV2 first removes colour codes and control characters.
func parsePytestV2(log string) map[string]string {
	return parsePytestWith(log, func(line string) string {
		line = ansiColour.ReplaceAllString(line, "")
		return strings.Map(func(r rune) rune {
			if r >= 1 && r < 32 {
				return -1
			}
			return r
		}, line)
	}, nil)
}

var djangoMultiline = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$`),
	regexp.MustCompile(`(?m)^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$`),
	regexp.MustCompile(`(?m)^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$`),
}

// parseDjango reads runtests.py --verbosity 2: "name (module.Class) ... ok"
// and its variants, including an "ok" on a later line.
func parseDjango(log string) map[string]string {
	st := map[string]string{}
	prev := ""
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "--version is equivalent to version") {
			st["--version is equivalent to version"] = TestPassed
		}
		if before, _, ok := strings.Cut(line, " ... "); ok {
			prev = before
		}
		for _, suffix := range []string{" ... ok", " ... OK", " ...  OK"} {
			if strings.HasSuffix(line, suffix) {
				if strings.HasPrefix(line, "Applying sites.0002_alter_domain_unique...test_no_migrations") {
					_, line, _ = strings.Cut(line, "...")
					line = strings.TrimSpace(line)
				}
				st[line[:strings.LastIndex(line, suffix)]] = TestPassed
				break
			}
		}
		if before, _, ok := strings.Cut(line, " ... skipped"); ok {
			st[before] = TestSkipped
		}
		for _, k := range []struct{ word, status string }{{"FAIL", TestFailed}, {"ERROR", TestError}} {
			if strings.HasSuffix(line, " ... "+k.word) {
				before, _, _ := strings.Cut(line, " ... "+k.word)
				st[before] = k.status
			}
			// The header of the failure's traceback: "FAIL: test_x (...)".
			if strings.HasPrefix(line, k.word+":") {
				if f := strings.Fields(line); len(f) > 1 {
					st[f[1]] = k.status
				}
			}
		}
		if strings.HasPrefix(line, "ok") && prev != "" {
			st[prev] = TestPassed
		}
	}
	for _, re := range djangoMultiline {
		for _, m := range re.FindAllStringSubmatch(log, -1) {
			st[m[1]] = TestPassed
		}
	}
	return st
}

var sympyFailureHeader = regexp.MustCompile(`(_*) (.*)\.py:(.*) (_*)`)

// parseSympy reads bin/test --verbose: "test_name ok", "test_name F",
// "test_name E", and the "___ path.py:test_name ___" headers of failures.
func parseSympy(log string) map[string]string {
	st := map[string]string{}
	for _, m := range sympyFailureHeader.FindAllStringSubmatch(log, -1) {
		st[m[2]+".py:"+m[3]] = TestFailed
	}
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "test_") {
			continue
		}
		name := strings.Fields(line)[0]
		switch {
		case strings.HasSuffix(line, " E"):
			st[name] = TestError
		case strings.HasSuffix(line, " F"):
			st[name] = TestFailed
		case strings.HasSuffix(line, " ok"):
			st[name] = TestPassed
		}
	}
	return st
}

// parseSeaborn reads pytest -rA as seaborn's parser does.
func parseSeaborn(log string) map[string]string {
	st := map[string]string{}
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, TestFailed):
			if len(f) > 1 {
				st[f[1]] = TestFailed
			}
		case strings.Contains(line, " "+TestPassed+" "):
			if len(f) > 1 && f[1] == TestPassed {
				st[f[0]] = TestPassed
			}
		case strings.HasPrefix(line, TestPassed):
			if len(f) > 1 {
				st[f[1]] = TestPassed
			}
		}
	}
	return st
}

// parseMatplotlib reads pytest -rA, naming mouse buttons by number as the
// dataset does.
func parseMatplotlib(log string) map[string]string {
	st := map[string]string{}
	r := strings.NewReplacer("MouseButton.LEFT", "1", "MouseButton.RIGHT", "3")
	for _, line := range strings.Split(log, "\n") {
		line = r.Replace(line)
		status := ""
		for _, s := range strings.Split(statusAlt, "|") {
			if strings.HasPrefix(line, s) {
				status = s
				break
			}
		}
		if status == "" {
			continue
		}
		if status == TestFailed {
			line = strings.ReplaceAll(line, " - ", " ")
		}
		if f := strings.Fields(line); len(f) > 1 {
			st[f[1]] = f[0]
		}
	}
	return st
}
