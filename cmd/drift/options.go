package main

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/risk"
	"github.com/drift-gitops/drift/internal/scrub"
)

// commonOptions hold what drift diff and drift detect are both told: what to render,
// how to preview it, and where the report goes.
type commonOptions struct {
	streams genericiooptions.IOStreams
	kube    *genericclioptions.ConfigFlags

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
	renderLimits   render.LimitSettings
	maxTargets     int
	shard          plan.Shard

	// github holds the GitHub side's flags; charts how charts are fetched; report how
	// the report is judged and shown.
	github githubOptions
	gitlab gitlabOptions
	report reportFlags
	// disabledRisks are drift.yaml's risks.disable (trusted: from the base).
	disabledRisks map[string]bool
	charts        chartOptions

	// flags tells which flags were given on the command line.
	flags *pflag.FlagSet
	// errMu keeps warnings from servers started side by side whole, and guards
	// liveClients, the clients of the clusters discovery reads.
	errMu       sync.Mutex
	liveClients map[plan.ClusterKey]kubernetes.Interface

	// files are the previewed ref's files, where annotations find their lines (nil:
	// the working directory's, for drift report merge).
	files fs.FS

	// noObjects marks a report read back from JSON (drift report merge): it has the
	// diffs but not the objects KUBECTL_EXTERNAL_DIFF compares.
	noObjects bool

	// getenv reads the environment (KUBECTL_EXTERNAL_DIFF, NO_COLOR); tests replace it.
	getenv func(string) string
	// scrub removes credentials, Secret and masked values from everything the run
	// writes: the report, warnings, errors.
	scrub *scrub.Scrubber
	// appliers are the appliers the run decides targets' appliers from.
	appliers *applier.Registry
}

// init readies the options for a command writing to streams.
func (o *commonOptions) init(streams genericiooptions.IOStreams) {
	o.streams, o.kube, o.getenv = streams, genericclioptions.NewConfigFlags(true), os.Getenv
	o.appliers = appliers.All()
	// kubectl's --cluster is not drift's: diff has its own, detect has none.
	o.kube.ClusterName = nil
}

// addFlags registers the flags diff and detect share.
func (o *commonOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Repo, "repo", ".", "directory inside the git repository to read")
	f.StringVar(&o.Ref, "ref", "", "git ref to render (branch, origin/main, tag, SHA, HEAD~2, refs/pull/N/merge); default: the work tree as it is on disk")
	f.StringArrayVar(&o.Paths, "path", nil, "directory or file to render, relative to --repo (repeatable; default: --repo itself)")
	f.StringVarP(&o.Output, "output", "o", "text", "report format: text, markdown, json or changes (field by field)")
	f.StringVar(&o.OutFile, "out", "", "write the report to this file instead of stdout")
	f.IntVar(&o.Concurrency, "concurrency", 32, "objects previewed at once")
	f.StringVar(&o.FieldManager, "field-manager", "", "field manager the real pipeline applies with, where the applier lets you choose it (default: the applier's own, kubectl for kubectl-server-side)")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "preview a forced apply, taking fields over from other managers")
	f.BoolVar(&o.ShowUnchanged, "show-unchanged", false, "list unchanged objects by name (they are always counted)")
	f.BoolVar(&o.ShowSecrets, "show-secrets", false, "show Secret values instead of *** (local use only; never in CI)")
	f.StringVar(&o.Dump, "dump", "", "also write the normalized objects into DIR/live and DIR/merged (DIR/base and DIR/head for a split change), named as kubectl diff names them")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "deadline for the whole run")
	f.StringVar(&o.Config, "config", "", "drift.yaml to use instead of the one at the root of the rendered ref (a path inside the repository is read from the refs, like drift.yaml)")
	f.BoolVar(&o.Prune, "prune", true, "report what applying would delete: objects an inventory in the cluster owns that the change no longer renders (--prune=false skips it)")
	f.StringVar(&o.Applier, "applier", "", "what applies the targets for real, so drift predicts what it does: "+applier.NameList()+" (default "+string(applier.Default)+"); overrides drift.yaml")
	f.StringVar(&o.ApplyMode, "apply-mode", "", "old name of --applier: server is kubectl-server-side, client is kubectl")
	f.StringArrayVar(&o.Targets, "target", nil, "diff only the drift.yaml targets with this name (repeatable; globs like 'web-*' allowed)")
	addBranchFlag(f, &o.Branches)
	f.StringVar(&o.Shard, "shard", "", "preview only share I of N of the run (such as 2/4), for a matrix of runners; write each share with -o json and combine them with drift report merge")
	addRenderLimitFlags(f, &o.renderLimits, &o.maxTargets)
	o.charts.addFlags(f, o.getenv)
	o.github.addFlags(f)
	o.gitlab.addFlags(f)
	o.report.addFlags(f, true)
	o.kube.AddFlags(f)
	o.flags = f
}

// validate checks the flags before any work; configFrom is diff's --config-from.
func (o *commonOptions) validate(configFrom string) error {
	if !slices.Contains(write.Formats, o.Output) {
		return fmt.Errorf("unknown output format %q: use -o %s", o.Output, strings.Join(write.Formats, ", -o "))
	}
	if err := o.report.validate(); err != nil {
		return err
	}
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, got %d", o.Concurrency)
	}
	if o.maxTargets < 1 {
		return fmt.Errorf("--max-targets must be at least 1, got %d", o.maxTargets)
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", o.Timeout)
	}
	if o.flagSet("field-manager") && o.FieldManager == "" {
		return fmt.Errorf("--field-manager must not be empty")
	}
	shard, err := o.gitlabShard()
	if err != nil {
		return err
	}
	if shard != "" {
		if o.shard, err = plan.ParseShard(shard); err != nil {
			return err
		}
		if err := o.checkShardFlags(); err != nil {
			return err
		}
		for _, name := range []string{"github-comment", "github-issue", "comment-file", "step-summary"} {
			if o.flagSet(name) {
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
func (o *commonOptions) overrides() plan.Overrides {
	ov := plan.Overrides{}
	if o.Applier != "" {
		ov.Applier, _ = applier.ParseName(o.Applier) // checked by validate
	}
	if name, ok := applier.FromApplyMode(o.ApplyMode); ok {
		ov.Applier = name
	}
	if o.flagSet("field-manager") {
		ov.FieldManager = &o.FieldManager
	}
	if o.flagSet("context") {
		ov.Context = o.kube.Context
	}
	if o.flagSet("kubeconfig") {
		ov.Kubeconfig = o.kube.KubeConfig
	}
	if o.flagSet("namespace") {
		ov.Namespace = o.kube.Namespace
	}
	return ov
}

// warnf writes a warning line to stderr.
func (o *commonOptions) warnf(format string, args ...any) {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if o.scrub != nil {
		msg = o.scrub.Scrub(msg)
	}
	fmt.Fprintf(o.streams.ErrOut, "drift: warning: %s\n", msg)
}

// flagSet reports whether a flag was given on the command line.
func (o *commonOptions) flagSet(name string) bool {
	if o.flags == nil {
		return false
	}
	f := o.flags.Lookup(name)
	return f != nil && f.Changed
}

// addBranchFlag registers --branch.
func addBranchFlag(f *pflag.FlagSet, branches *[]string) {
	f.StringArrayVar(branches, "branch", nil, "a branch the previewed ref stands for (repeatable): Argo CD and Flux sources that follow it render from the ref (default: in GitHub Actions the pull request's base and head branches, else GITHUB_REF_NAME; in GitLab CI the merge request's target and source branches, else CI_COMMIT_BRANCH; and always the branches whose tip the ref is, and the default branch)")
}

// branches are the branches the run previews: --branch, else what the CI system the
// run is in says (a pull request's base and head branches: a merge commit previews
// what the base branch will hold).
func (o *commonOptions) branches() []string {
	if len(o.Branches) > 0 {
		return o.Branches
	}
	if o.getenv("GITLAB_CI") == "true" {
		return gitlabBranches(o.getenv)
	}
	if o.getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	var out []string
	for _, name := range []string{"GITHUB_BASE_REF", "GITHUB_HEAD_REF"} {
		if b := o.getenv(name); b != "" {
			out = append(out, b)
		}
	}
	if len(out) == 0 && o.getenv("GITHUB_REF_TYPE") != "tag" {
		if b := o.getenv("GITHUB_REF_NAME"); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// knownNames are what drift.yaml may name that internal/config does not define: the
// risk rules risks.disable may switch off.
func knownNames() config.Known { return config.Known{Risks: risk.Names()} }
