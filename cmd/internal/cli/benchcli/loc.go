package benchcli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/loc"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/repo"
)

func newLocCommand(sio cli.Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loc",
		Short: cli.FullShort("loc"),
		Long: `Loc-Bench measures how well a search finds the code an issue is about: each
case is a query (an issue text or commit message), a repository at a commit,
and the ground truth (files, line ranges, functions) of the fixing change.
See README, "Code localization".`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Usage(errors.New("loc: give a subcommand: build, validate, run, grid or analyze"))
		},
	}
	cmd.AddCommand(newLocBuildCommand(sio), newLocValidateCommand(sio), newLocRunCommand(sio),
		newLocGridCommand(sio), newLocAnalyzeCommand(sio))
	return cmd
}

type locRepoFlags struct{ repos, cloneFrom string }

// defaultRepos is where repositories are looked for without --repos, as
// relace-mcp's benchmark keeps its clones in a directory of its own (so
// its `validate --input FILE` needs no other argument): the user's cache
// directory, patchbench/repos.
func defaultRepos() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no --repos and no cache directory for the default: %w", err)
	}
	return filepath.Join(d, "patchbench", "repos"), nil
}

// resolve fills --repos with [defaultRepos] when it was not given.
func (r *locRepoFlags) resolve() error {
	if r.repos != "" {
		return nil
	}
	d, err := defaultRepos()
	r.repos = d
	return err
}

func (r *locRepoFlags) store() *repo.Store {
	s := repo.NewStore(r.repos)
	// Without --clone-from nothing is cloned: a missing repository is an
	// error naming it at once, and nothing reaches the network.
	s.BaseURL, s.NoClone = r.cloneFrom, r.cloneFrom == ""
	return s
}

func (r *locRepoFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.repos, "repos", "", "repositories `DIR`: DIR/OWNER/NAME (bare or not; also OWNER/NAME.git, OWNER__NAME); default the user cache directory's patchbench/repos")
	f.StringVar(&r.cloneFrom, "clone-from", "", "clone missing repositories once from `URL`/OWNER/NAME (https://github.com for GitHub); without it a missing repository is an error")
}

// reportProblems prints one line per problem and returns the exit error.
func reportProblems(sio cli.Stdio, what string, problems []loc.Problem, of int) error {
	for _, p := range problems {
		fmt.Fprintf(sio.Err, "%s: %s\n", cli.ProgramName, p)
	}
	if len(problems) > 0 {
		return cli.Failed(fmt.Errorf("%s: %d problems in %d cases", what, len(problems), of))
	}
	return nil
}

type locValidateOptions struct {
	dataset, input, output string
	limit                  int
	repos                  locRepoFlags
}

// validationReport is relace-mcp's validation report (validate --output
// FILE), under its field names.
type validationReport struct {
	TotalCases     int                `json:"total_cases"`
	ValidCases     int                `json:"valid_cases"`
	InvalidCases   int                `json:"invalid_cases"`
	ValidationRate float64            `json:"validation_rate"`
	TotalErrors    int                `json:"total_errors"`
	TotalWarnings  int                `json:"total_warnings"`
	Results        []validationResult `json:"results"`
}

type validationResult struct {
	CaseID   string   `json:"case_id"`
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

func newValidationReport(cases []loc.Case, problems []loc.Problem) validationReport {
	errs := map[string][]string{}
	for _, p := range problems {
		errs[p.ID] = append(errs[p.ID], p.Err)
	}
	r := validationReport{TotalCases: len(cases), TotalErrors: len(problems), Results: []validationResult{}}
	for _, c := range cases {
		e := errs[c.ID]
		if e == nil {
			e = []string{}
			r.ValidCases++
		}
		r.Results = append(r.Results, validationResult{CaseID: c.ID, Valid: len(e) == 0, Errors: e, Warnings: []string{}})
	}
	r.InvalidCases = r.TotalCases - r.ValidCases
	if r.TotalCases > 0 {
		r.ValidationRate = float64(r.ValidCases) / float64(r.TotalCases)
	}
	return r
}

func newLocValidateCommand(sio cli.Stdio) *cobra.Command {
	var o locValidateOptions
	cmd := &cobra.Command{
		Use:   "validate --dataset CASES.jsonl [--repos DIR] [--output REPORT.json]",
		Short: "Check every case against its repository",
		Long: `Check that each case's repository and base_commit exist, every ground-truth
file exists at base_commit, every range lies inside its file and inside its
context range, and every function is one of the file's syntax tree. Each
problem is printed with the case id; --output FILE also writes relace-mcp's
validation report (total_cases, valid_cases, invalid_cases, validation_rate,
total_errors, total_warnings, results). Without --repos the repositories
are looked for in the user cache directory's patchbench/repos.

Exit status: 0 every case is valid; 1 some are not; 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if o.dataset != "" && o.dataset != o.input {
					return cli.Usage(fmt.Errorf("loc validate: --dataset %s and --input %s differ", o.dataset, o.input))
				}
				o.dataset = o.input
			}
			if o.dataset == "" {
				return cli.Usage(errors.New("loc validate: --dataset (or --input) is required"))
			}
			if o.limit < 0 {
				return cli.Usage(fmt.Errorf("loc validate: --limit %d: want 0 (all) or more", o.limit))
			}
			if err := o.repos.resolve(); err != nil {
				return cli.Usage(fmt.Errorf("loc validate: %w", err))
			}
			cases, err := loc.ReadCases(o.dataset)
			if err != nil {
				return cli.Usage(err)
			}
			if o.limit > 0 && o.limit < len(cases) {
				cases = cases[:o.limit]
			}
			store := o.repos.store()
			defer store.Close()
			problems := loc.Validate(cmd.Context(), cases, store)
			rep := newValidationReport(cases, problems)
			fmt.Fprintf(sio.Err, "%s: %d cases, %d valid, %d with problems\n", cli.ProgramName, rep.TotalCases, rep.ValidCases, rep.InvalidCases)
			if o.output != "" {
				data, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				if err := atomicfile.Write(o.output, append(data, '\n'), 0o644); err != nil {
					return cli.Usage(fmt.Errorf("loc validate: --output: %w", err))
				}
			}
			return reportProblems(sio, "loc validate", problems, len(cases))
		},
	}
	cmd.Flags().StringVar(&o.dataset, "dataset", "", "cases `FILE` (JSONL, as loc build writes, or relace-mcp's schema)")
	cmd.Flags().StringVar(&o.input, "input", "", "another name of --dataset (relace-mcp)")
	cmd.Flags().StringVar(&o.output, "output", "", "write relace-mcp's validation report (JSON) to `FILE`")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "validate the first `N` cases only (0: all)")
	o.repos.register(cmd)
	return cmd
}
