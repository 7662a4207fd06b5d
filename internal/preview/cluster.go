package preview

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/resultcache"
)

// cluster is a cluster of the run, as its Clusters gave it.
type cluster struct {
	*kube.Connection
	// seeding is what a throwaway server was loaded with (Ephemeral); empty for a
	// live cluster.
	seeding
	// lookupKey names the cluster to the render cache when a Helm target's lookup
	// reads it (the helm applier); "" until then.
	lookupKey string

	// results answers dry runs from drift's cache (Deps.Results), once ready is
	// closed; nil without one.
	results *resultcache.Cluster
	ready   chan struct{}
	// up, for a throwaway server, is closed once it started (Clients set) or
	// failed to; nil for a live cluster, connected before its cluster is made.
	up chan struct{}

	capsOnce    sync.Once
	kubeVersion string
	apiVersions []string
	capsErr     error
}

// capabilities returns the server's version and API versions, read once.
func (c *cluster) capabilities() (string, []string, error) {
	c.capsOnce.Do(func() {
		if c.up != nil {
			<-c.up // a Helm target renders with the capabilities of a server still starting
		}
		if c.Clients == nil {
			c.capsErr = errors.New("the ephemeral API server did not start")
			return
		}
		c.kubeVersion, c.apiVersions, c.capsErr = c.Clients.Capabilities()
	})
	return c.kubeVersion, c.apiVersions, c.capsErr
}

// clusterGroup is the targets that deploy to one cluster.
type clusterGroup struct {
	key     plan.ClusterKey
	cluster *cluster
	targets []*Target
	// others are the skipped targets that deploy to the same cluster.
	others []*Target
}

// connect groups the targets to preview by cluster and has the run's Clusters open
// each (a live cluster, or a throwaway server loaded with the base).
func (r *runner) connect(ctx context.Context, targets []plan.Target) (*Preview, error) {
	p := &Preview{}
	byKey := map[plan.ClusterKey]*clusterGroup{}
	clusters := plan.Clusters(targets)
	for _, t := range targets {
		rt := newTarget(t)
		p.Targets = append(p.Targets, rt)
		if r.opts.Shard.ByCluster {
			// A shard by cluster previews its clusters' targets whole, and connects
			// to no other cluster.
			rt.shard, rt.ownsTarget = r.opts.Shard, r.opts.Shard.Owns(clusters[t.Cluster])
			if !rt.ownsTarget {
				continue
			}
		}
		if t.Skipped != "" || t.Refused != "" {
			continue
		}
		g := byKey[t.Cluster]
		if g == nil {
			g = &clusterGroup{key: t.Cluster}
			byKey[t.Cluster] = g
			p.groups = append(p.groups, g)
		}
		g.targets = append(g.targets, rt)
	}
	for _, rt := range p.Targets {
		if g := byKey[rt.Cluster]; g != nil && rt.Skipped != "" {
			g.others = append(g.others, rt)
		}
	}
	return p, r.deps.Clusters.open(ctx, r, p)
}

// prepareCluster starts reading, while the targets render, what previewing on a live
// cluster reads first: its APIs (discovery) and what keys its answers in drift's
// cache (Deps.Results, with a sink), closing ready when done.
func (r *runner) prepareCluster(ctx context.Context, cl *cluster) {
	go func() { _, _ = cl.Clients.Mapper.ResourcesFor(schema.GroupVersionResource{Resource: "namespaces"}) }()
	// The APIServices, which planning reads (dryrun's aggregated APIs), beside
	// discovery rather than after the render: one round trip less before the first
	// dry run on a far cluster.
	go cl.Clients.AggregatedAPIs()
	if r.deps.Results == nil || r.deps.Sink == nil {
		return
	}
	cl.ready = make(chan struct{})
	go func() {
		defer close(cl.ready)
		cl.results = r.deps.Results(ctx, cl.Clients)
	}()
}

// wait waits for what prepareCluster started.
func (c *cluster) wait() {
	if c != nil && c.ready != nil {
		<-c.ready
	}
}

// newTarget is a planned target as the preview takes it: its renderer and applier
// are plan's.
func newTarget(t plan.Target) *Target { return &Target{Target: t} }
