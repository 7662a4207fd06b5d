package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/plan"
)

// newReportCommand groups what drift does with reports it wrote.
func newReportCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "report", Short: "Work with drift's JSON reports", Args: cobra.NoArgs}
	cmd.AddCommand(newMergeCommand(streams))
	return cmd
}

// newMergeCommand combines the shards of a run (drift diff --shard I/N) into its
// report, written and published once, after planning the run again to check them.
func newMergeCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cfg, o := app.NewConfig(streams.Out, streams.ErrOut), &app.Diff{}
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
			rep, err := cfg.Merge(cmd.Context(), o, args)
			return cfg.Publish(cmd.Context(), &o.Run, rep, err)
		},
	}
	bindRun(cmd, cfg, &o.Run)
	f := cmd.Flags()
	f.StringVar(&o.Base, "base", "", "the --base the shards ran with")
	f.StringVar(&o.ConfigFrom, "config-from", plan.ConfigFromBase, "the --config-from the shards ran with")
	bindIssues(f, &o.Run)
	return cmd
}
