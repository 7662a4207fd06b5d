package preview

import (
	"context"
	"testing"

	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/source"
)

// planned opens the repository in dir, plans drift's targets (its drift.yaml is
// drift, trusted whole) and returns them with a snapshot of each of refs.
func planned(t *testing.T, dir, drift string, refs ...string) ([]plan.Target, []*source.Snapshot) {
	t.Helper()
	repo, err := source.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var snaps []*source.Snapshot
	for _, ref := range refs {
		snap, err := repo.Snapshot(ref)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snap)
	}
	cfg, err := config.Parse("drift.yaml", []byte(drift), config.Known{})
	if err != nil {
		t.Fatal(err)
	}
	targets := plan.Targets(&plan.Config{Use: cfg, Base: cfg}, repo.Dir, nil, plan.Overrides{}, appliers.All())
	var base *source.Snapshot
	if len(snaps) > 1 {
		base = snaps[1]
	}
	plan.Resolve(targets, snaps[0], base)
	return targets, snaps
}

// connectLive connects every cluster to the test API server, ns its default
// namespace.
func connectLive(t *testing.T, ns string) func(context.Context, plan.ClusterKey) (*kube.Connection, error) {
	env := shared.Env(t)
	return func(context.Context, plan.ClusterKey) (*kube.Connection, error) {
		clients, err := kube.NewClients(env.Config, 4)
		return &kube.Connection{Clients: clients, Namespace: ns, RequestTimeout: kube.DefaultRequestTimeout}, err
	}
}
