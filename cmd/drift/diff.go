package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/plan"
)

// newDiffCommand previews what applying a git ref would change in its clusters.
func newDiffCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cfg, o := app.NewConfig(streams.Out, streams.ErrOut), &app.Diff{}
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := cfg.Diff(cmd.Context(), o)
			return cfg.Publish(cmd.Context(), &o.Run, rep, err)
		},
	}
	bindRun(cmd, cfg, &o.Run)
	f := cmd.Flags()
	f.StringVar(&o.Cluster, "cluster", "", `kubeconfig cluster to use, or "ephemeral" for a throwaway local API server seeded with --base`)
	f.StringVar(&o.Base, "base", "", "diff only the targets whose inputs changed since this ref; with --cluster ephemeral, also the ref loaded into the server first (what is deployed)")
	f.StringVar(&o.ConfigFrom, "config-from", plan.ConfigFromBase, "with --base, where rules, clusters and appliers come from: base (the trusted side of a pull request) or head (everything from the previewed ref; trusted local runs only)")
	f.StringVar(&o.CRDsFromContext, "crds-from-context", "", "with --cluster ephemeral: load the CustomResourceDefinitions of this kube context's cluster into the ephemeral server (read-only: a LIST), so custom resources of CRDs the repository does not hold are checked")
	f.BoolVar(&o.LookupSecrets, "lookup-secrets", false, "with --base: let Helm's lookup hand the templates of the helm applier the data of the cluster's Secrets, as helm upgrade does (every value is scrubbed from the output, but a template the pull request wrote can still transform one: see docs/security.md); without it, lookup sees Secrets without their data; likewise a ResourceSet Secret's copyFrom is filled from the cluster's Secret only with it")
	f.BoolVar(&o.EphemeralLoadAll, "ephemeral-load-all", false, "with --cluster ephemeral and --base: load the server with every object of the base and preview every object, not only what the change touches (an object the change leaves as it is is otherwise unchanged without a request, and what the server would warn of it is not asked)")
	f.BoolVar(&o.NoSplitDrift, "no-split-drift", false, "with --base on a live cluster: do not tell the change apart from drift already in the cluster (saves the base's dry-runs)")
	return cmd
}
