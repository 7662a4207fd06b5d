package main

import (
	"context"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
)

// ephemeralCluster is --cluster's value for a throwaway local API server.
const ephemeralCluster = "ephemeral"

// previewDeps connects with kubectl's flags (and diff's --cluster), starts ephemeral
// servers from drift's assets, shows progress on a terminal, scrubs what it warns
// and hands each finished result to sink, the run's entry builder.
func (o *commonOptions) previewDeps(cache *render.Cache, progress *progress, cluster string, sink preview.Sink) preview.Deps {
	return preview.Deps{
		Connect: func(ctx context.Context, key plan.ClusterKey) (*kube.Connection, error) {
			flags := kube.FlagsFor(o.kube, key.Kubeconfig, key.Context)
			if cluster != "" {
				flags.ClusterName = &cluster
			}
			return kube.Connect(ctx, flags, o.Concurrency, o.scrub.AddCredential)
		},
		StartEphemeral: func(ctx context.Context) (*kube.Connection, func(), error) {
			return ephemeral.Connect(ctx, o.getenv, o.Concurrency)
		},
		Cache:    cache,
		Appliers: o.appliers,
		Progress: progress.update,
		Warnf:    o.warnf,
		Secrets:  o.scrub.AddSecrets,
		Sink:     sink,
	}
}

// newBuilder is the run's one entry builder, over the run's scrubber, with what the
// report may show: the preview hands it each result as it finishes, and report.Build
// gets every entry from it.
func (o *commonOptions) newBuilder(cluster string) *entry.Builder {
	return entry.NewBuilder(entry.Options{ShowSecrets: o.ShowSecrets, DisabledRisks: o.disabledRisks, Unified: &o.report.Unified,
		Ephemeral: reportCluster(cluster) == report.ClusterEphemeral}, o.scrub)
}

// reportCluster is the report's cluster field for diff's --cluster.
func reportCluster(cluster string) string {
	if cluster == ephemeralCluster {
		return report.ClusterEphemeral
	}
	return ""
}

// previewOptions are the flags as what to preview.
func (o *commonOptions) previewOptions(m mode) preview.Options {
	opts := preview.Options{
		Concurrency:    o.Concurrency,
		ForceConflicts: o.ForceConflicts,
		Prune:          o.Prune,
		SplitDrift:     m.splitDrift,
		Ephemeral:      m.cluster == ephemeralCluster,
		FieldManager:   o.FieldManager,
		Shard:          o.shard,
	}
	if o.kube.Namespace != nil {
		opts.Namespace = *o.kube.Namespace
	}
	return opts
}
