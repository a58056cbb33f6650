package swe

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/envstore"
	"github.com/patchbench/patchbench/repo"
)

// EnvConfig says how to build the environments of a dataset's instances.
type EnvConfig struct {
	Dataset, Repos, Store string
	// SpecFile, NoBuiltinSpecs: as in [Config]; an instance's setup is its
	// spec's Setup commands, joined with &&.
	SpecFile       string
	NoBuiltinSpecs bool
	// Build holds the store's build options; Setup is set per instance.
	Build envstore.BuildOptions
}

// EnvResult is one environment built (or skipped) for a group of
// instances sharing a repository and base commit.
type EnvResult struct {
	Repo      string   `json:"repo"`
	Instances []string `json:"instances"`
	Setup     string   `json:"setup"`
	envstore.BuildResult
}

// BuildEnvs builds, in the environment store, the environment of every
// dataset instance's base commit: a clean tree of the commit with its spec's
// setup commands run in the sandbox, so that `swe eval --env-store` tests in
// it. Instances with the same repository and base commit share one build;
// commits already in the store are skipped. An instance whose repository
// and version no spec names is an input error.
func BuildEnvs(ctx context.Context, c EnvConfig) ([]EnvResult, error) {
	insts, err := LoadDataset(c.Dataset)
	if err != nil {
		return nil, inputErr("%v", err)
	}
	cfg := TestConfig{NoBuiltinSpecs: c.NoBuiltinSpecs}
	if c.SpecFile != "" {
		if cfg.Specs, err = LoadSpecs(c.SpecFile); err != nil {
			return nil, inputErr("--spec: %v", err)
		}
	}
	type group struct {
		repo, commit, setup string
		ids                 []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, inst := range insts {
		s, ok := cfg.Specs.Lookup(inst.Repo, inst.Version)
		if !ok && !c.NoBuiltinSpecs {
			s, ok = BuiltinSpecs().Lookup(inst.Repo, inst.Version)
		}
		if !ok {
			return nil, inputErr("%s: no spec names %s version %q; give --spec", inst.InstanceID, inst.Repo, inst.Version)
		}
		setup := strings.Join(s.Setup, " && ")
		if setup == "" {
			setup = "true" // the environment is the tree itself
		}
		key := inst.Repo + "@" + inst.BaseCommit
		g := byKey[key]
		if g == nil {
			g = &group{repo: inst.Repo, commit: inst.BaseCommit, setup: setup}
			byKey[key] = g
			groups = append(groups, g)
		} else if g.setup != setup {
			return nil, inputErr("%s: base commit %s of %s is set up by %q for another instance and %q for this one", inst.InstanceID, inst.BaseCommit, inst.Repo, g.setup, setup)
		}
		g.ids = append(g.ids, inst.InstanceID)
	}
	store, err := envstore.Open(c.Store)
	if err != nil {
		return nil, err
	}
	repos := repo.NewStore(c.Repos)
	defer repos.Close()
	var out []EnvResult
	for _, g := range groups {
		r, err := repos.Get(ctx, g.repo)
		if err != nil {
			return out, fmt.Errorf("swe: environments: %s: %w", g.repo, err)
		}
		opts := c.Build
		opts.Setup = g.setup
		res, err := store.Build(ctx, r, []string{g.commit}, opts)
		if err != nil {
			return out, fmt.Errorf("swe: environments: %s at %s: %w", g.repo, g.commit, err)
		}
		for _, b := range res {
			out = append(out, EnvResult{Repo: g.repo, Instances: slices.Clone(g.ids), Setup: g.setup, BuildResult: b})
		}
	}
	return out, nil
}
