package envstore

import (
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/sandbox"
)

// TestPythonHashSeed builds two commits whose module m.py, a membership
// test against a set of strings, is the same at both, and whose setup
// byte-compiles it and writes hash("patchbench"). Each build is its own
// Python process: with string hashes seeded at random the hash differs,
// and Python before 3.11 marshals the frozenset constant in hash order, so
// m's byte-code differs too. With the default PYTHONHASHSEED=0 each is one
// object; --env PYTHONHASHSEED=random is the user's and is recorded.
func TestPythonHashSeed(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "py")
	os.Mkdir(dir, 0o755)
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, "m.py", "def f(x):\n    return x in {\"alpha\", \"beta\", \"gamma\", \"delta\", \"epsilon\", \"zeta\"}\n", 0o644)
	writeFile(t, dir, "README", "one\n", 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")
	c1 := git(t, dir, "rev-parse", "HEAD")
	writeFile(t, dir, "README", "two\n", 0o644)
	git(t, dir, "commit", "-q", "-am", "two")
	c2 := git(t, dir, "rev-parse", "HEAD")
	r := openRepo(t, dir)

	type interp struct {
		name, python string
		runner       sandbox.Runner
	}
	pythons := []interp{{"system", strings.TrimSuffix(pySetup(), pySetupArgs), runner()}}
	// A Python before 3.11 (pyenv's, under a home directory the sandbox
	// hides, so run unsandboxed), where the byte-code itself depends on
	// the seed.
	for _, v := range []string{"3.10", "3.9", "3.8"} {
		p, err := exec.LookPath("python" + v)
		if out, perr := exec.Command("pyenv", "prefix", v).Output(); perr == nil {
			p, err = filepath.Join(strings.TrimSpace(string(out)), "bin", "python"+v), nil
		}
		if err == nil {
			if _, err := os.Stat(p); err == nil {
				pythons = append(pythons, interp{"python" + v, p, sandbox.Plain{}})
				break
			}
		}
	}
	if len(pythons) == 1 {
		t.Log("no Python before 3.11 found: only the hash file checks the seed")
	}

	for _, py := range pythons {
		for _, tc := range []struct {
			name     string
			env      []string
			wantSeed string
			distinct bool // the setup's outputs differ between the builds
		}{
			{"default", nil, "0", false},
			{"user random", []string{"PYTHONHASHSEED=random"}, "random", true},
		} {
			t.Run(py.name+"/"+tc.name, func(t *testing.T) {
				setup := py.python + ` -m compileall -q . && ` + py.python + ` -c 'print(hash("patchbench"))' > hash`
				s := openStore(t, filepath.Join(t.TempDir(), "store"))
				res, err := s.Build(ctx, r, []string{c1, c2}, BuildOptions{Setup: setup, Runner: py.runner, Env: tc.env})
				if err != nil {
					t.Fatal(err)
				}
				objects := map[string]map[string]bool{"hash": {}, "pyc": {}}
				for _, br := range res {
					if br.Status != StatusBuilt {
						t.Fatalf("%s: %s %s", br.Commit, br.Status, br.Reason)
					}
					m, err := s.Manifest(br.Commit)
					if err != nil {
						t.Fatal(err)
					}
					if m.PythonHashSeed != tc.wantSeed {
						t.Errorf("%s: manifest's python_hash_seed %q, want %q", br.Commit, m.PythonHashSeed, tc.wantSeed)
					}
					for _, e := range m.Entries {
						if e.Path == "hash" {
							objects["hash"][e.Hash] = true
						}
						if ok, _ := path.Match("__pycache__/m.*.pyc", e.Path); ok {
							objects["pyc"][e.Hash] = true
						}
					}
				}
				want := 1
				if tc.distinct {
					want = 2
				}
				if n := len(objects["hash"]); n != want {
					t.Errorf("hash(\"patchbench\") written by two setups: %d objects, want %d", n, want)
				}
				if n := len(objects["pyc"]); n == 0 || (!tc.distinct && n != 1) {
					t.Errorf("the byte-code of the unchanged m.py is %d objects, want 1", n)
				}
			})
		}
	}
}
