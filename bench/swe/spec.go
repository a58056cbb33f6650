package swe

import (
	_ "embed"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Spec says how an instance's tests are run and read, as SWE-bench's
// harness does it for one repository and version: the test command gets the
// test files that the test patch touches (the "directives"), never test ids,
// and the log is read by the repository's own parser.
type Spec struct {
	// TestCmd is the command the directives are appended to, run with
	// /bin/sh -c in the worktree.
	TestCmd string `json:"test_cmd"`
	// Parser names the log parser: pytest, pytest_options, pytest_v2,
	// django, sympy, seaborn, matplotlib, or auto (every format
	// [ParseTestOutput] knows).
	Parser string `json:"parser"`
	// Directives says how test files become arguments: files (the paths,
	// without data files), django (module labels, as runtests.py takes
	// them) or none.
	Directives string `json:"directives,omitempty"`
	// EvalCommands run before the test command in the same shell (locale
	// exports, for example).
	EvalCommands []string `json:"eval_commands,omitempty"`
	// Env holds KEY=value variables for the test command.
	Env []string `json:"env,omitempty"`
	// Setup are the environment's setup commands (install the package and
	// its dependencies), run once per repository and version where an
	// environment is built; informational otherwise.
	Setup []string `json:"setup,omitempty"`
}

// SpecEntry is a Spec for some versions of a repository; the version "*"
// matches any.
type SpecEntry struct {
	Versions []string `json:"versions"`
	Spec
}

// SpecTable maps a repository (owner/name) to its entries, first match wins.
type SpecTable map[string][]SpecEntry

//go:embed specs.yaml
var builtinSpecsYAML []byte

// BuiltinSpecs returns the specs of every repository of SWE-bench Lite and
// Verified, as the official harness runs them (in its conda environments).
func BuiltinSpecs() SpecTable {
	t, err := parseSpecs(builtinSpecsYAML, "built-in specs")
	if err != nil {
		panic(err) // the embedded table is tested
	}
	return t
}

// LoadSpecs reads a spec file (YAML or JSON, the layout of specs.yaml).
func LoadSpecs(file string) (SpecTable, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parseSpecs(data, file)
}

func parseSpecs(data []byte, name string) (SpecTable, error) {
	var t SpecTable
	if err := yaml.UnmarshalStrict(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for repo, entries := range t {
		for i, e := range entries {
			where := fmt.Sprintf("%s: %s entry %d", name, repo, i+1)
			switch {
			case len(e.Versions) == 0:
				return nil, fmt.Errorf("%s: no versions (use \"*\" for any)", where)
			case strings.TrimSpace(e.TestCmd) == "":
				return nil, fmt.Errorf("%s: no test_cmd", where)
			case logParsers[e.Parser] == nil:
				return nil, fmt.Errorf("%s: unknown parser %q (want one of %s)", where, e.Parser, strings.Join(ParserNames(), ", "))
			}
			switch e.Directives {
			case "":
				entries[i].Directives = "files"
			case "files", "django", "none":
			default:
				return nil, fmt.Errorf("%s: unknown directives %q (want files, django or none)", where, e.Directives)
			}
		}
	}
	return t, nil
}

// Lookup returns the spec for repo at version, or false.
func (t SpecTable) Lookup(repo, version string) (Spec, bool) {
	for _, e := range t[repo] {
		if slices.Contains(e.Versions, version) || slices.Contains(e.Versions, "*") {
			return e.Spec, true
		}
	}
	return Spec{}, false
}

// nonTestExts are the data files a test patch may touch that are not test
// directives (SWE-bench's NON_TEST_EXTS; "csv" has no dot there too).
var nonTestExts = []string{".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml"}

var diffGitB = regexp.MustCompile(`(?m)^diff --git a/.* b/(.*)$`)

// TestFiles returns the test files of testPatch as the spec's command
// takes them.
func (s Spec) TestFiles(testPatch string) []string {
	if s.Directives == "none" {
		return nil
	}
	var out []string
	for _, m := range diffGitB.FindAllStringSubmatch(testPatch, -1) {
		d := strings.TrimRight(m[1], "\r")
		if slices.ContainsFunc(nonTestExts, func(ext string) bool { return strings.HasSuffix(d, ext) }) {
			continue
		}
		if s.Directives == "django" {
			if !isDjangoTestFile(d) {
				continue
			}
			d = strings.TrimSuffix(d, ".py")
			d = strings.TrimPrefix(d, "tests/")
			d = strings.ReplaceAll(d, "/", ".")
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func isDjangoTestFile(p string) bool {
	base := path.Base(p)
	return base == "tests.py" || strings.HasPrefix(base, "test_") || strings.Contains(p, "/tests/") || strings.Contains(p, "/test_")
}

// Command returns the shell script that runs inst's tests.
func (s Spec) Command(inst Instance) string {
	var b strings.Builder
	for _, c := range s.EvalCommands {
		b.WriteString(c)
		b.WriteString("\n")
	}
	b.WriteString(s.TestCmd)
	for _, d := range s.TestFiles(inst.TestPatch) {
		b.WriteString(" ")
		b.WriteString(shellQuote(d))
	}
	return b.String()
}
