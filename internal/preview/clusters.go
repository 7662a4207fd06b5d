package preview

import (
	"context"
	"fmt"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
)

// Clusters gives a run the clusters it previews on, chosen once for the run: the
// live clusters its targets name (Live), or one throwaway API server per cluster
// loaded with the base (Ephemeral). Every client the preview uses comes from the
// kube.Connection it gives. Another kind of cluster is another implementation here.
type Clusters interface {
	// open gives each of p's groups of targets its cluster, ready for their
	// rendering; a cluster that cannot be had makes its targets errors (the run's,
	// when it is the only one).
	open(ctx context.Context, r *runner, p *Preview) error
	// ready readies g's cluster for its rendered head, before its dry runs.
	ready(ctx context.Context, r *runner, g *clusterGroup) error
	// opening says what a target still waited for when its cluster was not open
	// by the run's end: "while connecting to its cluster".
	opening() string
	// Ephemeral reports whether the clusters are throwaway servers: nothing was
	// deployed there before the run but what it loaded.
	Ephemeral() bool
}

// Live is the run's live clusters, each opened by Connect once.
type Live struct {
	// Connect opens the live cluster key names.
	Connect func(ctx context.Context, key plan.ClusterKey) (*kube.Connection, error)
}

func (l Live) open(ctx context.Context, r *runner, p *Preview) error {
	for _, g := range p.groups {
		conn, err := l.Connect(ctx, g.key)
		if err != nil {
			if len(p.groups) == 1 {
				return err
			}
			for _, t := range g.targets {
				t.connErr = fmt.Errorf("%s: %w", g.key, err)
			}
			continue
		}
		g.cluster = &cluster{Connection: conn}
		for _, t := range g.targets {
			t.conn = g.cluster
		}
		r.prepareCluster(ctx, g.cluster)
	}
	return nil
}

// ready: a live cluster holds what it holds.
func (Live) ready(context.Context, *runner, *clusterGroup) error { return nil }

func (Live) opening() string { return "while connecting to its cluster" }

// Ephemeral: live clusters are not throwaway ones.
func (Live) Ephemeral() bool { return false }
