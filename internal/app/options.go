package app

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/risk"
	"github.com/drift-gitops/drift/internal/scrub"
)

// Run is what drift diff and drift detect are both told: what to render, how to
// preview it, and where the report goes. cmd/drift binds its flags onto it.
type Run struct {
	Repo           string
	Ref            string
	Paths          []string
	Output         string
	OutFile        string
	Concurrency    int
	FieldManager   string
	ForceConflicts bool
	ShowUnchanged  bool
	ShowSecrets    bool
	Dump           string
	Timeout        time.Duration
	Config         string
	Targets        []string
	Branches       []string
	Applier        string
	ApplyMode      string
	Prune          bool
	Shard          string
	// ShardBy is --shard-by: object (the default) or cluster.
	ShardBy      string
	RenderLimits render.LimitSettings
	MaxTargets   int
	// NoCache sends every dry run, neither reading nor writing the dry-run cache.
	NoCache bool

	// GitHub and GitLab are the forges' flags; Charts how charts are fetched; Report
	// how the report is judged and shown.
	GitHub GitHub
	GitLab GitLab
	// Sites are the flags of the forges of publish.Kinds (Gitea, Bitbucket, Azure
	// DevOps), by their prefix.
	Sites  Sites
	Report Report
	Charts Charts

	// Given reports whether a flag was given on the command line (nil: none was).
	Given func(name string) bool

	cfg   *Config
	shard plan.Shard
	// cache is drift's cache directory, opened once the repository is (openCache);
	// removeCache removes it when it is the run's own temporary one.
	cache       *cachedir.Dir
	removeCache func()
	// errMu keeps warnings from servers started side by side whole.
	errMu sync.Mutex
	// conns are the run's connections to live clusters (connect).
	conns connections

	// scrub removes credentials, Secret and masked values from everything the run
	// writes: the report, warnings, errors.
	scrub *scrub.Scrubber
}

// given reports whether a flag was given on the command line.
func (o *Run) given(name string) bool { return o.Given != nil && o.Given(name) }

// validate checks the flags before any work; configFrom is diff's --config-from.
func (o *Run) validate(configFrom string) error {
	if !slices.Contains(write.Formats, o.Output) {
		return fmt.Errorf("unknown output format %q: use -o %s", o.Output, strings.Join(write.Formats, ", -o "))
	}
	if err := o.Report.validate(); err != nil {
		return err
	}
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, got %d", o.Concurrency)
	}
	if o.MaxTargets < 1 {
		return fmt.Errorf("--max-targets must be at least 1, got %d", o.MaxTargets)
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", o.Timeout)
	}
	if o.given("field-manager") && o.FieldManager == "" {
		return fmt.Errorf("--field-manager must not be empty")
	}
	shard, err := o.gitlabShard()
	if err != nil {
		return err
	}
	if shard == "" && o.given("shard-by") {
		return fmt.Errorf("--shard-by without --shard: it says how a run split across runners is split")
	}
	if shard != "" {
		if o.shard, err = plan.ParseShard(shard); err != nil {
			return err
		}
		if err := o.shard.ParseShardBy(o.ShardBy); err != nil {
			return err
		}
		if err := o.checkShardFlags(); err != nil {
			return err
		}
		for _, name := range []string{"github-comment", "github-issue", "comment-file", "step-summary"} {
			if o.given(name) {
				return fmt.Errorf("--%s with --shard: a shard holds part of the report; publish once, from drift report merge of every shard's JSON report", name)
			}
		}
	}
	if configFrom != plan.ConfigFromBase && configFrom != plan.ConfigFromHead {
		return fmt.Errorf("unknown --config-from %q: use base or head", configFrom)
	}
	switch {
	case o.Applier != "" && o.ApplyMode != "":
		return fmt.Errorf("--apply-mode is the old name of --applier: give one of them")
	case o.ApplyMode != "" && o.ApplyMode != "server" && o.ApplyMode != "client":
		return fmt.Errorf("unknown --apply-mode %q: use server or client (or --applier)", o.ApplyMode)
	case o.Applier != "":
		if _, err := applier.ParseName(o.Applier); err != nil {
			return fmt.Errorf("unknown --applier %q: use one of %s", o.Applier, applier.NameList())
		}
	}
	return nil
}

// overrides are what the command line sets for every target.
func (o *Run) overrides() plan.Overrides {
	ov := plan.Overrides{}
	if o.Applier != "" {
		ov.Applier, _ = applier.ParseName(o.Applier) // checked by validate
	}
	if name, ok := applier.FromApplyMode(o.ApplyMode); ok {
		ov.Applier = name
	}
	if o.given("field-manager") {
		ov.FieldManager = &o.FieldManager
	}
	if o.given("context") {
		ov.Context = o.cfg.Kube.Context
	}
	if o.given("kubeconfig") {
		ov.Kubeconfig = o.cfg.Kube.KubeConfig
	}
	if o.given("namespace") {
		ov.Namespace = o.cfg.Kube.Namespace
	}
	return ov
}

// overridesFor are overrides of a run against cluster (diff's --cluster): without
// a live one (ephemeral, drift targets), each cluster of a fleet gets its own server.
func (o *Run) overridesFor(cluster string) plan.Overrides {
	ov := o.overrides()
	ov.Clusterless = cluster == ephemeralCluster
	return ov
}

// warnf writes a warning line to stderr.
func (o *Run) warnf(format string, args ...any) {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if o.scrub != nil {
		msg = o.scrub.Scrub(msg)
	}
	fmt.Fprintf(o.cfg.ErrOut, "drift: warning: %s\n", msg)
}

// branches are the branches the run previews: --branch, else what the CI system the
// run is in says (a pull request's base and head branches: a merge commit previews
// what the base branch will hold).
func (o *Run) branches() []string {
	if len(o.Branches) > 0 {
		return o.Branches
	}
	if o.cfg.Getenv("GITLAB_CI") == "true" {
		return gitlabBranches(o.cfg.Getenv)
	}
	if o.siteInCI() != nil {
		return o.siteBranches()
	}
	if o.cfg.Getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	var out []string
	for _, name := range []string{"GITHUB_BASE_REF", "GITHUB_HEAD_REF"} {
		if b := o.cfg.Getenv(name); b != "" {
			out = append(out, b)
		}
	}
	if len(out) == 0 && o.cfg.Getenv("GITHUB_REF_TYPE") != "tag" {
		if b := o.cfg.Getenv("GITHUB_REF_NAME"); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// knownNames are what drift.yaml may name that internal/config does not define: the
// risk rules risks.disable may switch off.
func knownNames() config.Known { return config.Known{Risks: risk.Names()} }
