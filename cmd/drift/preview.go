package main

import (
	"context"
	"fmt"
	"time"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/dryrun/ephemeral"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// ephemeralCluster is --cluster's value for a throwaway local API server.
const ephemeralCluster = "ephemeral"

// previewDeps connects with kubectl's flags, starts ephemeral servers from drift's
// assets, shows progress on a terminal and scrubs what it warns.
func (o *diffOptions) previewDeps(cache *render.Cache, progress *progress) preview.Deps {
	return preview.Deps{
		Connect: func(ctx context.Context, key plan.ClusterKey) (*dryrun.Connection, error) {
			flags := dryrun.FlagsFor(o.kube, key.Kubeconfig, key.Context)
			if o.Cluster != "" {
				flags.ClusterName = &o.Cluster
			}
			return dryrun.Connect(ctx, flags, o.Concurrency, o.scrub.AddCredential)
		},
		StartEphemeral: o.startEphemeral,
		Cache:          cache,
		Progress:       progress.update,
		Warnf:          o.warnf,
		Secrets:        o.scrub.AddSecrets,
	}
}

func (o *diffOptions) previewOptions(base *source.Snapshot) preview.Options {
	opts := preview.Options{
		Concurrency:    o.Concurrency,
		ForceConflicts: o.ForceConflicts,
		Prune:          o.Prune,
		SplitDrift:     base != nil && !o.NoSplitDrift && !o.detect,
		Ephemeral:      o.Cluster == ephemeralCluster,
		FieldManager:   o.FieldManager,
	}
	if o.kube.Namespace != nil {
		opts.Namespace = *o.kube.Namespace
	}
	return opts
}

// startEphemeral starts a throwaway API server for one cluster of the run.
func (o *diffOptions) startEphemeral(ctx context.Context) (*dryrun.Connection, func(), error) {
	assets, err := ephemeral.AssetsDir(o.getenv)
	if err != nil {
		return nil, nil, err
	}
	server, err := ephemeral.Start(ctx, assets)
	if err != nil {
		return nil, nil, err
	}
	clients, err := dryrun.NewClientsWithin(ctx, server.Config, o.Concurrency)
	if err != nil {
		_ = server.Stop()
		return nil, nil, err
	}
	stop := func() { _ = server.Stop() }
	return &dryrun.Connection{Clients: clients, Namespace: "default", RequestTimeout: dryrun.DefaultRequestTimeout}, stop, nil
}

// runTimeout is the cause of a run's end at --timeout, so that the messages of whatever
// it interrupted say so; it is a context.DeadlineExceeded.
type runTimeout time.Duration

func (d runTimeout) Error() string { return fmt.Sprintf("timed out after %s", time.Duration(d)) }

func (runTimeout) Is(target error) bool { return target == context.DeadlineExceeded }
