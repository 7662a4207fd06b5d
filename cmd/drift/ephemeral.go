package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/dryrun/ephemeral"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

const ephemeralCluster = "ephemeral"

type ephemeralRun struct {
	cluster *cluster
	base    *source.Snapshot
	server  *ephemeral.Server
}

func (e *ephemeralRun) stop() { _ = e.server.Stop() }

// startEphemeral starts a throwaway API server and loads into it, for real: the
// CustomResourceDefinitions and Namespaces of both refs, then every object of --base.
// Those only the head has are reported as additions all the same.
func (o *diffOptions) startEphemeral(ctx context.Context, repo *source.Repo, paths []string, head []render.Object) (*ephemeralRun, error) {
	assets, err := ephemeral.AssetsDir(o.getenv)
	if err != nil {
		return nil, err
	}
	var baseSnap *source.Snapshot
	var baseObjs []render.Object
	if o.Base != "" {
		if baseSnap, err = repo.Snapshot(o.Base); err != nil {
			return nil, fmt.Errorf("--base: %w", err)
		}
		var present []string
		for _, p := range paths {
			if baseSnap.CheckPaths([]string{p}) == nil {
				present = append(present, p)
			}
		}
		if len(present) > 0 {
			res, err := render.Plain(baseSnap.FS, render.Options{Paths: present})
			if err != nil {
				return nil, fmt.Errorf("failed to render the base, %s: %w", baseSnap.Describe(), err)
			}
			for _, f := range res.Failures {
				fmt.Fprintf(o.streams.ErrOut, "drift: warning: the base (%s) has a document that cannot be loaded: %s\n", baseSnap.Describe(), f.Error())
			}
			baseObjs = res.Objects
		}
	}
	ns := "default"
	if o.kube.Namespace != nil && *o.kube.Namespace != "" {
		ns = *o.kube.Namespace
	}

	server, err := ephemeral.Start(assets)
	if err != nil {
		return nil, err
	}
	run := &ephemeralRun{server: server, base: baseSnap}
	clients, err := dryrun.NewClients(server.Config, o.Concurrency)
	if err != nil {
		run.stop()
		return nil, err
	}
	inBase := dryrun.Keys(baseObjs)
	seed := append([]render.Object(nil), baseObjs...)
	absent := map[object.Key]bool{}
	for _, obj := range head {
		if isScaffolding(obj.ID().GroupKind()) && !inBase[obj.ID().Key()] {
			seed = append(seed, obj)
			absent[obj.ID().Key()] = true
		}
	}
	failed := dryrun.Seed(ctx, clients, seed, dryrun.Options{FieldManager: o.FieldManager, Namespace: ns, Concurrency: o.Concurrency})
	if ctx.Err() != nil {
		run.stop()
		return nil, fmt.Errorf("interrupted while loading the base into the ephemeral server: %w", context.Cause(ctx))
	}
	for _, f := range failed {
		where := "the ephemeral server"
		if f.Object.Source != "" {
			where = f.Object.Where()
		}
		fmt.Fprintf(o.streams.ErrOut, "drift: warning: could not load %s into the ephemeral server (%s): %s\n", f.ID.Display(), where, f.Err.Message)
	}
	run.cluster = &cluster{clients: clients, namespace: ns, requestTimeout: defaultRequestTimeout, absent: absent}
	return run, nil
}

// isScaffolding reports kinds other objects need to exist first: Namespaces and CRDs.
func isScaffolding(gk schema.GroupKind) bool {
	return gk == schema.GroupKind{Kind: "Namespace"} ||
		gk == schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
}
