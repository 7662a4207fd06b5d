package preview

import (
	"context"
	"fmt"
	"github.com/drift-gitops/drift/internal/controllercrds"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/resultcache"
)

// cluster is a cluster of the run, live or ephemeral.
type cluster struct {
	*kube.Connection
	// absent lists objects the server holds only so others can be previewed.
	absent map[object.Key]bool
	// seeded lists what an ephemeral server was loaded with; assumed, the targets'
	// namespaces it was given though nothing renders them.
	seeded  map[object.Key]bool
	assumed map[object.Key]bool
	// unloaded says, by object, why an ephemeral server refused the base's version
	// of it.
	unloaded map[object.Key]string
	// shipped is what an ephemeral server is given of drift's copies of the
	// controllers' CRDs.
	shipped controllercrds.Serving
	// installedBy says, by namespace, why an ephemeral server was given a namespace
	// a controller runs in (controllercrds.Serving.Namespaces).
	installedBy map[string]string
	// stop releases the cluster (stops an ephemeral server); nil for live clusters.
	stop func()
	// lookupKey names the cluster to the render cache when a Helm target's lookup
	// reads it (the helm applier); "" until then.
	lookupKey string

	// results answers dry runs from drift's cache (Deps.Results), once ready is
	// closed; nil without one.
	results *resultcache.Cluster
	ready   chan struct{}

	capsOnce    sync.Once
	kubeVersion string
	apiVersions []string
	capsErr     error
}

// capabilities returns the server's version and API versions, read once.
func (c *cluster) capabilities() (string, []string, error) {
	c.capsOnce.Do(func() { c.kubeVersion, c.apiVersions, c.capsErr = c.Clients.Capabilities() })
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

// connect groups the targets to preview by cluster and connects to each cluster (or
// starts an ephemeral server, loaded with the base). One unreachable cluster of
// several does not hide the others: its targets are errors.
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
	if r.opts.Ephemeral {
		return p, r.startEphemerals(ctx, p)
	}
	for _, g := range p.groups {
		conn, err := r.deps.Connect(ctx, g.key)
		if err != nil {
			if len(p.groups) == 1 {
				return p, err
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
	return p, nil
}

// prepareCluster starts reading, while the targets render, what previewing on a live
// cluster reads first: its APIs (discovery) and what keys its answers in drift's
// cache (Deps.Results, with a sink), closing ready when done.
func (r *runner) prepareCluster(ctx context.Context, cl *cluster) {
	go func() { _, _ = cl.Clients.Mapper.ResourcesFor(schema.GroupVersionResource{Resource: "namespaces"}) }()
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
