package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
)

// newTargetsCommand lists the targets a run would preview, without a cluster.
func newTargetsCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cfg, o := app.NewConfig(streams.Out, streams.ErrOut), &app.Run{}
	var base string
	cmd := &cobra.Command{
		Use:   "targets",
		Short: "List the targets drift previews, and where each is defined",
		Long: `List the targets of a ref: drift.yaml's, the paths given, or those the
repository's Argo CD Applications and ApplicationSets and Flux Kustomizations and
HelmReleases define (discovered when there is no drift.yaml, or with discover: true),
each with where it is defined, its path, renderer, namespace, context and applier,
and why a target is skipped or refused. No cluster is contacted.

With --base, the targets the change since that ref does not touch are skipped, as
drift diff --base skips them, and every file the change touches is listed as
previewed (with the targets that read it), not previewed (and why), read by nothing
(a file a controller could deploy from that no target reads: exit status 2) or
deploying nothing.`,
		Example: `  # The targets of the work tree
  drift targets

  # The Flux objects of one cluster's directory, as JSON
  drift targets --path clusters/staging -o json

  # What a pull request touches, and what of it drift previews
  drift targets --base origin/main --ref HEAD`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cfg.Targets(cmd.Context(), o, base) },
	}
	bindSource(cmd.Flags(), o)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "text", "text or json (with --base: an object with the targets and the coverage of the change)")
	cmd.Flags().StringVar(&base, "base", "", "account for the change since this ref: skip the targets it does not touch, and list every file it touches with what reads it")
	return cmd
}
