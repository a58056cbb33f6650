// Package applybench scores patch appliers on a corpus of broken patches.
//
// A case is a file, a patch meant for it (often malformed the way language
// models malform patches) and the content the patch was meant to produce, or
// null when the patch does not fit the file and must be refused. Each
// applier runs on its own copy of the file and is judged by its exit status
// and the file it leaves:
//
//   - recovered: success, and the file equals the expected content;
//   - recovered up to whitespace: success, and the file equals the expected
//     content once trailing whitespace and line endings are ignored
//     (recovered cases count here too);
//   - false apply: success, and the file is anything else, or the case had
//     to be refused;
//   - damaged: failure, but the file was changed anyway;
//   - refused: failure, file untouched.
//
// The peers (git apply, lenient git apply, GNU patch, the SWE-bench
// harness's chain) run as processes in the same run.
package applybench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
	"github.com/patchbench/patchbench/repo"
)

// Case is one row of the corpus, in the schema of malformed-dev.jsonl.gz.
type Case struct {
	ID       string  `json:"id"`
	Family   string  `json:"family"`
	Path     string  `json:"path"`
	Lang     string  `json:"lang"`
	OldCode  string  `json:"old_code"`
	Patch    string  `json:"patch"`
	Expected *string `json:"expected"`
}

// LoadCases reads a JSONL corpus, gzipped when the name ends in .gz.
func LoadCases(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("applybench: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("applybench: %s: %w", path, err)
		}
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	var cases []Case
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("applybench: %s line %d: %w", path, n, err)
		}
		if c.Path == "" || c.Patch == "" {
			return nil, fmt.Errorf("applybench: %s line %d: case %q needs path and patch", path, n, c.ID)
		}
		if c.ID == "" {
			c.ID = fmt.Sprint(n)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("applybench: %s: %w", path, err)
	}
	return cases, nil
}

// Tool is an applier. Run applies patchFile to the case's file under dir and
// reports whether the applier claimed success.
type Tool struct {
	Name  string
	Label string
	// Needs lists the programs the tool runs.
	Needs []string
	Run   func(ctx context.Context, dir, patchFile string, c Case) (bool, error)
}

// Outcomes.
const (
	Recovered   = "recovered"
	RecoveredWS = "recovered_ws" // up to whitespace, not exactly
	FalseApply  = "false_apply"
	Damaged     = "damaged"
	Refused     = "refused"
)

// Row is one tool's outcome on one case.
type Row struct {
	ID         string `json:"id"`
	Family     string `json:"family"`
	Tool       string `json:"tool"`
	Outcome    string `json:"outcome"`
	MustRefuse bool   `json:"must_refuse"`
}

// Patchbench is this project's tolerant applier, run in process: the
// engine's apply (repair.Apply), as patchbench apply runs it.
func Patchbench() Tool {
	return Tool{Name: "patchbench", Label: "patchbench apply", Run: func(ctx context.Context, dir, patchFile string, c Case) (bool, error) {
		text, err := os.ReadFile(patchFile)
		if err != nil {
			return false, err
		}
		root, err := patch.OpenRoot(dir)
		if err != nil {
			return false, err
		}
		defer root.Close()
		_, err = repair.Apply(root, string(text), repair.ApplyOptions{Name: patchFile, Target: c.Path})
		return err == nil, nil
	}}
}

// command runs a peer: a list of commands tried in order until one
// succeeds, as the SWE-bench harness does.
func command(name, label string, cmds ...[]string) Tool {
	var needs []string
	for _, c := range cmds {
		if !slices.Contains(needs, c[0]) {
			needs = append(needs, c[0])
		}
	}
	return Tool{Name: name, Label: label, Needs: needs, Run: func(ctx context.Context, dir, patchFile string, c Case) (bool, error) {
		for _, args := range cmds {
			full := append(append([]string{}, args[1:]...), patchFile)
			if name == "gnu-patch" {
				// GNU patch is told the file, as a user would for a patch
				// without usable names.
				full = append(full, filepath.FromSlash(c.Path))
			}
			// No repository around the case directory, and no user config.
			env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			var cmd *exec.Cmd
			if args[0] == "git" {
				cmd = repo.Command(ctx, dir, env, full...)
			} else {
				cmd = exec.CommandContext(ctx, args[0], full...)
				cmd.Dir = dir
				cmd.Env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
			}
			err := cmd.Run()
			if err == nil {
				return true, nil
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				return false, fmt.Errorf("%s: %w", args[0], err)
			}
		}
		return false, nil
	}}
}

// Peers returns the peer appliers by name.
func Peers() map[string]Tool {
	gnu := []string{"patch", "--batch", "--fuzz=5", "-p1", "--no-backup-if-mismatch", "-i"}
	return map[string]Tool{
		"git":         command("git", "git apply", []string{"git", "apply"}),
		"git-lenient": command("git-lenient", "git apply --recount --ignore-whitespace -C1", []string{"git", "apply", "--recount", "--ignore-whitespace", "-C1"}),
		"gnu-patch":   command("gnu-patch", "GNU patch --fuzz=5", gnu),
		"swebench-chain": command("swebench-chain", "SWE-bench chain (git apply, --reject, patch --fuzz=5)",
			[]string{"git", "apply", "--verbose"},
			[]string{"git", "apply", "--verbose", "--reject"},
			[]string{"patch", "--batch", "--fuzz=5", "-p1", "-i"}),
	}
}

// PeerNames lists the peers in table order.
var PeerNames = []string{"git", "git-lenient", "gnu-patch", "swebench-chain"}

// Run scores every tool on every case with the given number of workers.
func Run(ctx context.Context, cases []Case, tools []Tool, workers int) ([]Row, error) {
	type job struct{ ci, ti int }
	rows := make([]Row, len(cases)*len(tools))
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	tmp, err := os.MkdirTemp("", "applybench-")
	if err != nil {
		return nil, fmt.Errorf("applybench: %w", err)
	}
	defer os.RemoveAll(tmp)
	for w := 0; w < max(workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				c, tool := cases[j.ci], tools[j.ti]
				out, err := runOne(ctx, tmp, c, tool, j.ci)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("applybench: case %s, %s: %w", c.ID, tool.Name, err)
					}
					mu.Unlock()
				}
				rows[j.ci*len(tools)+j.ti] = Row{ID: c.ID, Family: c.Family, Tool: tool.Name, Outcome: out, MustRefuse: c.Expected == nil}
			}
		}()
	}
feed:
	for ci := range cases {
		for ti := range tools {
			select {
			case jobs <- job{ci, ti}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rows, firstErr
}

func runOne(ctx context.Context, tmp string, c Case, tool Tool, ci int) (string, error) {
	dir := filepath.Join(tmp, fmt.Sprintf("%s-%d", tool.Name, ci))
	work := filepath.Join(dir, "work")
	defer os.RemoveAll(dir)
	target := filepath.Join(work, filepath.FromSlash(c.Path))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(target, []byte(c.OldCode), 0o644); err != nil {
		return "", err
	}
	patchFile := filepath.Join(dir, "case.patch")
	if err := os.WriteFile(patchFile, []byte(c.Patch), 0o644); err != nil {
		return "", err
	}
	ok, err := tool.Run(ctx, work, patchFile, c)
	if err != nil {
		return Refused, err
	}
	got, rerr := os.ReadFile(target)
	changed := rerr != nil || string(got) != c.OldCode
	switch {
	case !ok && changed:
		return Damaged, nil
	case !ok:
		return Refused, nil
	case c.Expected == nil:
		return FalseApply, nil
	case rerr == nil && string(got) == *c.Expected:
		return Recovered, nil
	case rerr == nil && sameUpToWhitespace(string(got), *c.Expected):
		return RecoveredWS, nil
	}
	return FalseApply, nil
}

// sameUpToWhitespace compares texts line by line, ignoring trailing
// whitespace and line endings.
func sameUpToWhitespace(a, b string) bool {
	norm := func(s string) []string {
		lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " \t\r")
		}
		for len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		return lines
	}
	x, y := norm(a), norm(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// Score is the tally for one tool over a set of cases.
type Score struct {
	Cases       int `json:"cases"`
	Recoverable int `json:"recoverable"`
	Recovered   int `json:"recovered"`
	// RecoveredWS counts recovered cases plus those equal up to whitespace.
	RecoveredWS       int `json:"recovered_ws"`
	FalseApplies      int `json:"false_applies"`
	Damaged           int `json:"damaged"`
	Refused           int `json:"refused"`
	MustRefuse        int `json:"must_refuse"`
	MustRefuseRefused int `json:"must_refuse_refused"`
}

// RecoveredRate is Recovered over the recoverable cases.
func (s Score) RecoveredRate() float64 {
	if s.Recoverable == 0 {
		return 0
	}
	return float64(s.Recovered) / float64(s.Recoverable)
}

func (s *Score) add(r Row) {
	s.Cases++
	if r.MustRefuse {
		s.MustRefuse++
	} else {
		s.Recoverable++
	}
	switch r.Outcome {
	case Recovered:
		s.Recovered++
		s.RecoveredWS++
	case RecoveredWS:
		s.RecoveredWS++
	case FalseApply:
		s.FalseApplies++
	case Damaged:
		s.Damaged++
	case Refused:
		s.Refused++
	}
	// Refusing means leaving the file alone: a damaged file does not count.
	if r.MustRefuse && r.Outcome == Refused {
		s.MustRefuseRefused++
	}
}

// Summary holds the scores per tool, in total and per family.
type Summary struct {
	Tools    []string                    `json:"tools"`
	Labels   map[string]string           `json:"labels"`
	Total    map[string]Score            `json:"total"`
	ByFamily map[string]map[string]Score `json:"by_family"`
	Families []string                    `json:"families"`
	Rows     []Row                       `json:"rows"`
}

// Summarize tallies rows.
func Summarize(rows []Row, tools []Tool) *Summary {
	s := &Summary{Labels: map[string]string{}, Total: map[string]Score{}, ByFamily: map[string]map[string]Score{}, Rows: rows}
	for _, t := range tools {
		s.Tools = append(s.Tools, t.Name)
		s.Labels[t.Name] = t.Label
	}
	for _, r := range rows {
		tot := s.Total[r.Tool]
		tot.add(r)
		s.Total[r.Tool] = tot
		fam := s.ByFamily[r.Family]
		if fam == nil {
			fam = map[string]Score{}
			s.ByFamily[r.Family] = fam
			s.Families = append(s.Families, r.Family)
		}
		sc := fam[r.Tool]
		sc.add(r)
		fam[r.Tool] = sc
	}
	sort.Strings(s.Families)
	return s
}

// WriteTable writes the totals and the per-family recovery as Markdown.
func (s *Summary) WriteTable(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| tool | recovered | recovered up to whitespace | false applies | damaged | refused | must-refuse refused |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range s.Tools {
		sc := s.Total[t]
		fmt.Fprintf(&b, "| %s | %.1f%% (%d/%d) | %d | %d | %d | %d | %d/%d |\n", s.Labels[t],
			100*sc.RecoveredRate(), sc.Recovered, sc.Recoverable, sc.RecoveredWS, sc.FalseApplies, sc.Damaged, sc.Refused, sc.MustRefuseRefused, sc.MustRefuse)
	}
	b.WriteString("\nPer family: recovered (or, for must-refuse families, refused) / cases; false applies after a +.\n\n| family |")
	for _, t := range s.Tools {
		fmt.Fprintf(&b, " %s |", t)
	}
	b.WriteString("\n| --- |")
	for range s.Tools {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, f := range s.Families {
		fmt.Fprintf(&b, "| %s |", f)
		for _, t := range s.Tools {
			sc := s.ByFamily[f][t]
			good := sc.Recovered + sc.MustRefuseRefused
			cell := fmt.Sprintf(" %d/%d", good, sc.Cases)
			if sc.FalseApplies > 0 {
				cell += fmt.Sprintf(" +%d", sc.FalseApplies)
			}
			b.WriteString(cell + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
