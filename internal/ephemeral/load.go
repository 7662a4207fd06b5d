package ephemeral

import (
	"context"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
)

// Batch is one target's part of what a server is loaded with, loaded as the
// target's applier leaves it (Opts: its labels, annotations and field manager).
type Batch struct {
	// Scaffolding are its Namespaces and CRDs no batch loaded before; Objects the
	// rest; All everything it renders, whose inventories are recorded.
	Scaffolding, Objects, All []render.Object
	// Left, when set, names the objects of All that are not loaded (a pull
	// request's change leaves them as they are): their inventories list them, but
	// they are not marked.
	Left func(render.Object) bool
	// Namespace is the target's default namespace.
	Namespace string
	Opts      dryrun.Options
}

// Load loads a server for real, in the order objects need each other: shared
// scaffolding (Namespaces and CRDs of targets not previewed, with scaffoldOpts), each
// batch's scaffolding, then each batch's objects and what its applier leaves
// besides them (inventories' lists and marks). It returns the objects that could not
// be loaded; warnf hears of inventories that could not be recorded.
func Load(ctx context.Context, clients *kube.Clients, scaffolding []render.Object, scaffoldOpts dryrun.Options, batches []Batch, warnf func(string, ...any)) []dryrun.Result {
	failed := Seed(ctx, clients, scaffolding, scaffoldOpts)
	for _, b := range batches {
		// As the target's applier leaves them: Argo CD's tracking id of a
		// cluster-scoped object names the Application's destination namespace.
		failed = append(failed, Seed(ctx, clients, b.Scaffolding, b.Opts)...)
	}
	for _, b := range batches {
		failed = append(failed, Seed(ctx, clients, b.Objects, b.Opts)...)
		if err := markAsApplied(ctx, clients, b.All, b.Namespace, b.Left); err != nil {
			warnf("the base's inventory could not be recorded in the ephemeral server (%v): prune candidates may be missing", err)
		}
	}
	return failed
}

// Connect starts a throwaway API server from the assets drift installs (found with
// getenv in cache, see AssetsDir) and connects to it; stop stops it.
func Connect(ctx context.Context, getenv func(string) string, cache *cachedir.Dir, concurrency int) (conn *kube.Connection, stop func(), err error) {
	assets, err := AssetsDir(getenv, cache)
	if err != nil {
		return nil, nil, err
	}
	server, err := Start(ctx, assets)
	if err != nil {
		return nil, nil, err
	}
	clients, err := kube.NewClientsWithin(ctx, server.Config, concurrency)
	if err != nil {
		_ = server.Stop()
		return nil, nil, err
	}
	stop = func() { _ = server.Stop() }
	return &kube.Connection{Clients: clients, Namespace: "default", RequestTimeout: kube.DefaultRequestTimeout}, stop, nil
}
