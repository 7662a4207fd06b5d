package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/source"
)

// diffOptions holds everything drift diff is told.
type diffOptions struct {
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
	Cluster        string
	Base           string
	Config         string
	ConfigFrom     string
	Targets        []string
	Applier        string
	ApplyMode      string
	Prune          bool
	NoSplitDrift   bool
	renderLimits   renderLimitFlags

	// github holds the GitHub side's flags.
	github githubOptions
	// detect makes this drift detect: the tracked branch, reported as drift.
	detect bool

	// flags tells which flags were given on the command line.
	flags *pflag.FlagSet
	// errMu keeps warnings from servers started side by side whole.
	errMu sync.Mutex

	// getenv reads the environment (KUBECTL_EXTERNAL_DIFF, NO_COLOR); tests replace it.
	getenv func(string) string
	// scrub removes credentials, Secret and masked values from everything the run
	// writes: the report, warnings, errors.
	scrub *report.Scrubber
}

func newDiffCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &diffOptions{streams: streams, kube: genericclioptions.NewConfigFlags(true), getenv: osGetenv}
	// --cluster is drift's own: kubectl's kubeconfig cluster name, or "ephemeral".
	o.kube.ClusterName = nil
	cmd := &cobra.Command{
		Use:   "diff",
		Short: "Preview what applying a git ref would change in the cluster",
		Long: `Render the manifests of a git ref (or of the work tree), send each object to the
cluster with dryRun=All as the target's applier sends it (--applier: kubectl,
kubectl-server-side, flux, argocd, argocd-server-side or helm), and report every
object as add, modify, unchanged, delete or error with a unified diff of
live -> merged.

Exit status: 0 no changes, 1 changes, 2 errors (the report is then incomplete).`,
		Example: `  # What would the work tree's manifests change in the current context?
  drift diff

  # Preview a branch's apps/ directory against the staging context, as JSON
  drift diff --ref origin/feature --path apps --context staging -o json

  # No cluster at hand: compare HEAD with main on a throwaway local API server
  drift diff --cluster ephemeral --base main --ref HEAD

  # A pull request: only the drift.yaml targets it touches, each on its own cluster
  drift diff --ref refs/pull/7/merge --base origin/main

  # Two targets of drift.yaml by name
  drift diff --target web-prod --target 'api-*'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// addFlags registers the flags diff and detect share.
func (o *diffOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Repo, "repo", ".", "directory inside the git repository to read")
	f.StringVar(&o.Ref, "ref", "", "git ref to render (branch, origin/main, tag, SHA, HEAD~2, refs/pull/N/merge); default: the work tree as it is on disk")
	f.StringArrayVar(&o.Paths, "path", nil, "directory or file to render, relative to --repo (repeatable; default: --repo itself)")
	f.StringVarP(&o.Output, "output", "o", "text", "report format: text, markdown or json")
	f.StringVar(&o.OutFile, "out", "", "write the report to this file instead of stdout")
	f.IntVar(&o.Concurrency, "concurrency", 16, "objects previewed at once")
	f.StringVar(&o.FieldManager, "field-manager", "", "field manager the real pipeline applies with, where the applier lets you choose it (default: the applier's own, kubectl for kubectl-server-side)")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "preview a forced apply, taking fields over from other managers")
	f.BoolVar(&o.ShowUnchanged, "show-unchanged", false, "list unchanged objects by name (they are always counted)")
	f.BoolVar(&o.ShowSecrets, "show-secrets", false, "show Secret values instead of *** (local use only; never in CI)")
	f.StringVar(&o.Dump, "dump", "", "also write the normalized objects into DIR/live and DIR/merged (DIR/base and DIR/head for a split change), named as kubectl diff names them")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "deadline for the whole run")
	f.StringVar(&o.Cluster, "cluster", "", `kubeconfig cluster to use, or "ephemeral" for a throwaway local API server seeded with --base`)
	f.StringVar(&o.Base, "base", "", "diff only the targets whose inputs changed since this ref; with --cluster ephemeral, also the ref loaded into the server first (what is deployed)")
	f.StringVar(&o.Config, "config", "", "drift.yaml to use instead of the one at the root of the rendered ref (a path inside the repository is read from the refs, like drift.yaml)")
	f.StringVar(&o.ConfigFrom, "config-from", plan.ConfigFromBase, "with --base, where rules, clusters and appliers come from: base (the trusted side of a pull request) or head (everything from the previewed ref; trusted local runs only)")
	f.BoolVar(&o.NoSplitDrift, "no-split-drift", false, "with --base on a live cluster: do not tell the change apart from drift already in the cluster (saves the base's dry-runs)")
	f.BoolVar(&o.Prune, "prune", true, "report what applying would delete: objects an inventory in the cluster owns that the change no longer renders (--prune=false skips it)")
	f.StringVar(&o.Applier, "applier", "", "what applies the targets for real, so drift predicts what it does: "+strings.Join(dryrun.ProfileNames(), ", ")+" (default kubectl-server-side); overrides drift.yaml")
	f.StringVar(&o.ApplyMode, "apply-mode", "", "old name of --applier: server is kubectl-server-side, client is kubectl")
	f.StringArrayVar(&o.Targets, "target", nil, "diff only the drift.yaml targets with this name (repeatable; globs like 'web-*' allowed)")
	o.renderLimits.addFlags(f)
	o.github.addFlags(f)
	o.kube.AddFlags(f)
	o.flags = f
}

// Run renders, previews and reports, and returns an exitStatus for changes or errors.
func (o *diffOptions) Run(ctx context.Context) error {
	o.scrub = o.newScrubber()
	return o.scrubError(o.runDiff(ctx))
}

func (o *diffOptions) runDiff(ctx context.Context) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := o.github.checkEarly(o.getenv); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, runTimeout(o.Timeout))
	defer cancel()

	pl, err := o.plan(ctx)
	if err != nil {
		return err
	}
	head, base, cfg := pl.head, pl.base, pl.cfg
	progress := newProgress(o.streams.ErrOut, "previewing")
	pv, err := preview.Run(ctx, o.previewDeps(pl.cache, progress), o.previewOptions(base), pl.targets, head, base)
	progress.done()
	if err != nil {
		return err
	}
	defer pv.Stop()
	in := report.Input{Ref: o.Ref, Commit: head.Commit, Base: o.Base, Drift: o.detect, Config: cfg.Change, Targets: pv.Inputs()}
	if base != nil {
		in.BaseCommit = base.Commit
	}
	if o.Cluster == ephemeralCluster {
		in.Cluster = report.ClusterEphemeral
	}
	rep, err := report.Build(in, report.Options{ShowSecrets: o.ShowSecrets, Scrubber: o.scrub})
	if err != nil {
		return err
	}
	if err := o.write(ctx, rep); err != nil {
		return err
	}
	if err := o.publish(ctx, rep); err != nil {
		// A refusal from GitHub (a fork's read-only token) does not change what the
		// diff found: say so, and exit as the diff does. Anything else is an error.
		if github.StatusCode(err) != http.StatusForbidden {
			return err
		}
		o.warnf("%v", err)
	}
	switch {
	case !rep.Complete:
		return exitStatus{exitError}
	case rep.Summary.Changes() > 0:
		return exitStatus{exitChanges}
	}
	return nil
}

func (o *diffOptions) validate() error {
	switch o.Output {
	case "text", "markdown", "json":
	default:
		return fmt.Errorf("unknown output format %q: use -o text, -o markdown or -o json", o.Output)
	}
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, got %d", o.Concurrency)
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", o.Timeout)
	}
	if o.flagSet("field-manager") && o.FieldManager == "" {
		return fmt.Errorf("--field-manager must not be empty")
	}
	if o.ConfigFrom != plan.ConfigFromBase && o.ConfigFrom != plan.ConfigFromHead {
		return fmt.Errorf("unknown --config-from %q: use base or head", o.ConfigFrom)
	}
	switch {
	case o.Applier != "" && o.ApplyMode != "":
		return fmt.Errorf("--apply-mode is the old name of --applier: give one of them")
	case o.ApplyMode != "" && o.ApplyMode != "server" && o.ApplyMode != "client":
		return fmt.Errorf("unknown --apply-mode %q: use server or client (or --applier)", o.ApplyMode)
	case o.Applier != "":
		if _, err := dryrun.ProfileFor(o.Applier); err != nil || o.Applier == "server" || o.Applier == "client" {
			return fmt.Errorf("unknown --applier %q: use one of %s", o.Applier, strings.Join(dryrun.ProfileNames(), ", "))
		}
	}
	return nil
}

// overrides are what the command line sets for every target.
func (o *diffOptions) overrides() plan.Overrides {
	ov := plan.Overrides{Applier: o.Applier}
	switch o.ApplyMode {
	case "server":
		ov.Applier = "kubectl-server-side"
	case "client":
		ov.Applier = "kubectl"
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

// repoPaths turns --path values (relative to --repo) into repository paths.
func (o *diffOptions) repoPaths(repo *source.Repo) ([]string, error) {
	if len(o.Paths) == 0 {
		return []string{repo.Dir}, nil
	}
	out := make([]string, 0, len(o.Paths))
	for _, p := range o.Paths {
		rp, err := repo.Path(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rp)
	}
	return out, nil
}

// warnf writes a warning line to stderr.
func (o *diffOptions) warnf(format string, args ...any) {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if o.scrub != nil {
		msg = o.scrub.Scrub(msg)
	}
	fmt.Fprintf(o.streams.ErrOut, "drift: warning: %s\n", msg)
}

// flagSet reports whether a flag was given on the command line.
func (o *diffOptions) flagSet(name string) bool {
	if o.flags == nil {
		return false
	}
	f := o.flags.Lookup(name)
	return f != nil && f.Changed
}
