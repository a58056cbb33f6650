package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests of this file are the red-team pass over the MCP server
// (docs/mcp.md): an agent or an attacker using it on the default
// settings. Each runs the real binary, built by TestMCP.

// corpusCase is one case of patch/repair/testdata/*.jsonl.gz.
type corpusCase struct {
	ID      string `json:"id"`
	Path    string `json:"path"`
	OldCode string `json:"old_code"`
	Patch   string `json:"patch"`
}

func readCorpus(t *testing.T, file string) []corpusCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// resetDir empties dir (not dir itself: the server keeps it open) and
// writes the case's file with mode.
func resetDir(t *testing.T, dir string, c corpusCase, mode os.FileMode) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(dir, filepath.FromSlash(c.Path))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(c.OldCode), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// dirState is every file under dir: its mode and contents.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		val := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			val += " " + string(b)
		}
		st[filepath.ToSlash(rel)] = val
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// testMCPFidelity: apply_patch through the server gives exactly the
// CLI's result on every case of the two corpora, tolerant and strict,
// dry run and real: the same refusals, the same report, the same bytes
// and modes on disk.
func testMCPFidelity(t *testing.T, pb string) {
	var cases []corpusCase
	for _, f := range []string{"../../patch/repair/testdata/fidelity.jsonl.gz", "../../patch/repair/testdata/formats.jsonl.gz"} {
		cases = append(cases, readCorpus(t, f)...)
	}
	if len(cases) < 600 {
		t.Fatalf("%d cases read, want the two corpora's 605", len(cases))
	}
	base := t.TempDir()
	srvDir, cliDir := filepath.Join(base, "srv"), filepath.Join(base, "cli")
	os.Mkdir(srvDir, 0o755)
	os.Mkdir(cliDir, 0o755)
	p := startMCPProc(t, pb, "--root", srvDir, "--lsp-tools", "false")
	s := p.connect(t)
	defer s.Close()
	diffs := 0
	counts := map[string]int{}
	for i, c := range cases {
		mode := os.FileMode(0o644)
		if i%2 == 1 {
			mode = 0o755
		}
		for _, strict := range []bool{false, true} {
			for _, dry := range []bool{true, false} {
				resetDir(t, srvDir, c, mode)
				resetDir(t, cliDir, c, mode)
				res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "apply_patch",
					Arguments: map[string]any{"patch": c.Patch, "strict": strict, "dry_run": dry}})
				if err != nil {
					t.Fatalf("%s: %v", c.ID, err)
				}
				var srvRep map[string]any
				if err := json.Unmarshal([]byte(resultText(res)), &srvRep); err != nil {
					t.Fatalf("%s: the answer is not JSON: %v\n%s", c.ID, err, resultText(res))
				}
				for _, k := range []string{"summary", "written", "hunks_omitted"} {
					delete(srvRep, k)
				}
				args := []string{"apply", "--json", "-C", cliDir}
				if strict {
					args = append(args, "--strict")
				}
				if dry {
					args = append(args, "--check")
				}
				// On standard input, as the server feeds the patch.
				cmd := exec.Command(pb, append(args, "-")...)
				cmd.Stdin = strings.NewReader(c.Patch)
				out, err := cmd.Output()
				cliFailed := err != nil
				if _, ok := err.(*exec.ExitError); err != nil && !ok {
					t.Fatal(err)
				}
				var cliRep map[string]any
				if err := json.Unmarshal(out, &cliRep); err != nil {
					t.Fatalf("%s: the CLI's report is not JSON: %v\n%s", c.ID, err, out)
				}
				what := fmt.Sprintf("%s strict=%v dry_run=%v", c.ID, strict, dry)
				counts[fmt.Sprint(cliRep["status"])]++
				if res.IsError != cliFailed {
					t.Errorf("%s: server failed=%v, CLI failed=%v", what, res.IsError, cliFailed)
					diffs++
				}
				if d := cmp.Diff(cliRep, srvRep); d != "" {
					t.Errorf("%s: reports differ (-cli +server):\n%s", what, d)
					diffs++
				}
				if d := cmp.Diff(dirState(t, cliDir), dirState(t, srvDir)); d != "" {
					t.Errorf("%s: files differ (-cli +server):\n%s", what, d)
					diffs++
				}
				if diffs > 20 {
					t.Fatal("too many differences")
				}
			}
		}
	}
	t.Logf("%d cases x 4 runs, statuses %v, %d differences", len(cases), counts, diffs)
}
