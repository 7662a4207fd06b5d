package app

import (
	"context"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
)

// ephemeralCluster is --cluster's value for a throwaway local API server.
const ephemeralCluster = "ephemeral"

// previewDeps previews on the run's clusters (clusters), shows progress on a
// terminal, scrubs what it warns and hands each finished result to sink, the run's
// entry builder.
func (o *Run) previewDeps(cache *rendercache.Cache, progress *progress, cluster string, sink preview.Sink, results *resultCache) preview.Deps {
	deps := preview.Deps{
		Clusters: o.clusters(cluster),
		Cache:    cache,
		Appliers: o.cfg.Appliers,
		Progress: progress.update,
		Warnf:    o.warnf,
		Secrets:  o.scrub.AddSecrets,
		Sink:     sink,
	}
	if results != nil {
		deps.Results, deps.Opened = results.forCluster, results.opened
	}
	return deps
}

// clusters are the run's clusters, chosen once by diff's --cluster: a throwaway
// server per cluster started from drift's assets (ephemeral), else the live
// clusters, opened with kubectl's flags through the run's connections.
func (o *Run) clusters(cluster string) preview.Clusters {
	if cluster == ephemeralCluster {
		return preview.Ephemeral{Start: func(ctx context.Context) (*kube.Connection, func(), error) {
			return o.cfg.StartEphemeral(ctx, o.cfg.Getenv, o.cache, o.Concurrency)
		}}
	}
	return preview.Live{Connect: func(ctx context.Context, key plan.ClusterKey) (*kube.Connection, error) {
		return o.connect(ctx, key, cluster)
	}}
}

// newBuilder is the run's one entry builder, over the run's scrubber, with what the
// report may show (the risks pl's trusted drift.yaml disables among them): the
// preview hands it each result as it finishes, and entry.Build builds the rest
// with it.
func (o *Run) newBuilder(cluster string, pl *plan.Plan) *entry.Builder {
	return entry.NewBuilder(entry.Options{ShowSecrets: o.ShowSecrets, DisabledRisks: pl.Config.DisabledRisks(), Unified: &o.Report.Unified,
		Ephemeral: reportCluster(cluster) == report.ClusterEphemeral, UnchangedYAML: o.Dump != "" || o.cfg.Getenv(write.ExternalDiffEnv) != ""}, o.scrub)
}

// reportCluster is the report's cluster field for diff's --cluster.
func reportCluster(cluster string) string {
	if cluster == ephemeralCluster {
		return report.ClusterEphemeral
	}
	return ""
}

// previewOptions are the flags as what to preview.
func (o *Run) previewOptions(m mode) preview.Options {
	opts := preview.Options{
		Concurrency:    o.Concurrency,
		ForceConflicts: o.ForceConflicts,
		Prune:          o.Prune,
		SplitDrift:     m.splitDrift,
		FieldManager:   o.FieldManager,
		Shard:          o.shard,
		CopySecrets:    m.base == "" || m.lookupSecrets,
		// Every object's YAML is shown with --dump and to an external diff program.
		LoadAll: m.loadAll || o.Dump != "" || o.cfg.Getenv(write.ExternalDiffEnv) != "",
	}
	if o.cfg.Kube.Namespace != nil {
		opts.Namespace = *o.cfg.Kube.Namespace
	}
	return opts
}
