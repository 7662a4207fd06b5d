package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/source"
)

// newReportCommand groups what drift does with reports it wrote.
func newReportCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Work with drift's JSON reports",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newMergeCommand(streams))
	return cmd
}

// newMergeCommand combines the shards of a run (drift diff --shard I/N) into its
// report, written and published once, after planning the run again to check them.
func newMergeCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &diffOptions{}
	o.init(streams)
	cmd := &cobra.Command{
		Use:   "merge SHARD.json...",
		Short: "Combine the JSON reports of a run's shards into the run's report, and publish it",
		Long: `Combine the JSON reports every shard of one run wrote (drift diff --shard I/N -o json,
or drift detect) into the report one runner would have given: the same JSON, byte for
byte. Run it in the repository with the flags the shards ran with (--ref, --base,
--path, --target, --config): it plans and renders the run again, without a cluster,
and refuses shards that do not cover what the run renders exactly once (each object
from the shard that previews it, what belongs to a whole target from the shard that
owns it), whose totals are not their objects', or whose text holds what drift never
writes; shards of different runs (another commit, base, cluster, drift.yaml or plan),
a shard given twice and a missing shard are refused too. The merged report is
written and published as drift diff's is (--github-comment, --github-issue,
--step-summary, --json-report).

Exit status: 0 no changes, 1 changes, 2 errors (the report is then incomplete).`,
		Example: `  # Three runners each preview a third of the run...
  drift diff --base origin/main --shard 1/3 -o json --out shard-1.json
  # ...and one job, in the same checkout, merges and comments on the pull request
  drift report merge --base origin/main shard-*.json --github-comment`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.scrub = o.newScrubber()
			o.Base = o.gitlabBase(o.Base)
			if err := o.merge(cmd.Context(), args); err != nil {
				return scrubbedError{err: err, scrub: o.scrub}
			}
			return nil
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVar(&o.Base, "base", "", "the --base the shards ran with")
	f.StringVar(&o.ConfigFrom, "config-from", plan.ConfigFromBase, "the --config-from the shards ran with")
	f.BoolVar(&o.github.Issue, "github-issue", false, "for shards of drift detect: keep one GitHub issue (label drift) for this target set")
	o.gitlab.addIssueFlag(f)
	return cmd
}

// merge reads the shards' reports, plans the run again to check them, merges them
// and finishes as a run does.
func (o *diffOptions) merge(ctx context.Context, files []string) error {
	if !slices.Contains(write.Formats, o.Output) {
		return fmt.Errorf("unknown output format %q: use -o %s", o.Output, strings.Join(write.Formats, ", -o "))
	}
	if err := o.report.validate(); err != nil {
		return err
	}
	if err := o.preflight(); err != nil {
		return err
	}
	shards := map[string]*report.Report{}
	var first *report.Report
	for _, name := range files {
		if _, dup := shards[name]; dup {
			return fmt.Errorf("%s is given twice", name)
		}
		rep, err := readReport(name)
		if err != nil {
			return err
		}
		shards[name] = rep
		if first == nil {
			first = rep
		}
	}
	rep, err := report.Merge(shards)
	if err != nil {
		return err
	}
	if err := o.checkShards(ctx, first, shards); err != nil {
		return err
	}
	// Each shard judged itself by drift.yaml's failOn: the whole run is judged by it too.
	for _, s := range shards {
		if s.Policy != nil {
			o.report.configFailOn = append(o.report.configFailOn, s.Policy.FailOn...)
		}
	}
	// A merged report holds the diffs, not the objects an external diff program
	// (KUBECTL_EXTERNAL_DIFF) would compare: the diffs are shown as they are.
	o.noObjects = true
	return o.finish(ctx, rep)
}

// checkShards plans and renders the run again, as the shards did but without a
// cluster, and refuses shards that do not match it (report.CheckShards).
func (o *diffOptions) checkShards(ctx context.Context, first *report.Report, shards map[string]*report.Report) error {
	pl, err := plan.Open(plan.Request{
		Repo: o.Repo, Ref: o.Ref, DefaultRef: first.Kind == report.KindDrift, Base: o.Base, Paths: o.Paths, Names: o.Targets,
		Config: plan.ConfigSource{File: o.Config, From: o.ConfigFrom, Known: knownNames()}, Overrides: o.overrides(), Warnf: o.warnf,
		NewCache: func(repo *source.Repo) (*render.Cache, error) { return o.renderCache(ctx, repo) },
		Charts:   o.charts.fetcher(o.getenv),
		Context:  ctx, MaxTargets: o.maxTargets, Branches: o.branches(), ArgoClusters: o.liveArgoClusters(o.Cluster), LiveObject: o.liveObjects(o.Cluster),
		Appliers: o.appliers,
	})
	if err != nil {
		return fmt.Errorf("planning the run again to check its shards: %w", err)
	}
	var baseCommit string
	if pl.Base != nil {
		baseCommit = pl.Base.Commit
	}
	if pl.Head.Commit != first.Commit || baseCommit != first.BaseCommit {
		return fmt.Errorf("the shards preview commit %s against base %s; this merge plans %s against %s: run drift report merge with the --ref and --base the shards ran with",
			shortCommit(first.Commit), shortCommit(first.BaseCommit), shortCommit(pl.Head.Commit), shortCommit(baseCommit))
	}
	return report.CheckShards(shards, preview.Planned(pl.Cache, pl.Targets, pl.Head))
}

// shortCommit is a commit's first 12 digits, or "none".
func shortCommit(c string) string {
	if c == "" {
		return "none"
	}
	return c[:min(12, len(c))]
}

// readReport reads one JSON report.
func readReport(name string) (*report.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := report.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rep, nil
}
