package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/cli"
)

// diffOnlyFlags are drift diff's flags drift detect has not, named when it is given one.
var diffOnlyFlags = []string{"base", "cluster", "crds-from-context", "config-from", "no-split-drift", "ephemeral-load-all"}

// newDetectCommand is drift diff for a scheduled job: the tracked branch against the
// live cluster, every difference reported as drift.
func newDetectCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cfg, o := app.NewConfig(streams.Out, streams.ErrOut), &app.Run{}
	cmd := &cobra.Command{
		Use:   "detect",
		Short: "Report where the cluster no longer matches the repository (drift)",
		Long: `Render the tracked ref (default: the remote's default branch, origin/HEAD, else HEAD),
dry-run it against the live cluster as drift diff does, and report every object that
is not unchanged as drift: modify (the cluster differs from what applying the
repository would produce), add (missing from the cluster), delete (owned by an
inventory, gone from the repository, still live). With --github-issue, one issue per
repository and target set is opened, updated, closed and reopened as drift comes
and goes; --gitlab-issue, --gitea-issue and --bitbucket-issue do so on those forges,
--azure-issue with an Azure Boards work item.

Exit status: 0 no drift, 1 drift, 2 errors (the report is then incomplete).`,
		Example: `  # A scheduled job: drift of the default branch, kept in one GitHub issue
  drift detect --github-issue

  # Drift of the staging overlay, as JSON
  drift detect --target shop-staging -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := cfg.Detect(cmd.Context(), o)
			return cfg.Publish(cmd.Context(), o, rep, err)
		},
	}
	bindRun(cmd, cfg, o)
	bindIssues(cmd.Flags(), o)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		for _, name := range diffOnlyFlags {
			if err.Error() == "unknown flag: --"+name {
				return cli.FlagError(c, fmt.Errorf("%w: drift detect checks --ref (default: the default branch) against the live cluster of each target; use drift diff for --base, --cluster, --crds-from-context, --config-from and --no-split-drift", err))
			}
		}
		return cli.FlagError(c, err)
	})
	return cmd
}
