package app

import (
	"context"
	"sync"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/resultcache"
)

// connections are the run's connections to live clusters, one per cluster, made on
// first use through Config.Connect: discovery's reads of a cluster, the CRDs
// --crds-from-context copies and the preview share one, with kube's one retry
// policy and the connection's credentials told to the scrubber.
type connections struct {
	mu sync.Mutex
	by map[connectionKey]*connection
	// run bounds every request of the connections (bind): the run's context, not
	// that of whoever connects first (discovery's ends with discovery).
	run context.Context
}

// bind makes run's context the one every connection's requests end with.
func (c *connections) bind(run context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.run = run
}

// connectionKey is a cluster as the run names it: a target's kubeconfig and
// context, and diff's --cluster (a kubeconfig cluster) when set.
type connectionKey struct {
	plan.ClusterKey
	cluster string
}

type connection struct {
	once sync.Once
	conn *kube.Connection
	err  error
}

// connect is the run's connection to the cluster key names, with diff's --cluster
// cluster ("" none, or ephemeral: that is not a kubeconfig's cluster). Its requests
// end with the context bound to the run's connections (ctx when none is).
func (o *Run) connect(ctx context.Context, key plan.ClusterKey, cluster string) (*kube.Connection, error) {
	if cluster == ephemeralCluster {
		cluster = ""
	}
	k := connectionKey{key, cluster}
	o.conns.mu.Lock()
	if o.conns.by == nil {
		o.conns.by = map[connectionKey]*connection{}
	}
	c := o.conns.by[k]
	if c == nil {
		c = &connection{}
		o.conns.by[k] = c
	}
	if o.conns.run != nil {
		ctx = o.conns.run
	}
	o.conns.mu.Unlock()
	c.once.Do(func() {
		flags := kube.FlagsFor(o.cfg.Kube, key.Kubeconfig, key.Context)
		if cluster != "" {
			flags.ClusterName = &cluster
		}
		c.conn, c.err = o.cfg.Connect(ctx, flags, o.Concurrency, o.scrub.AddCredential)
		if c.err == nil && !o.NoCache && o.cache != nil {
			// The cluster's API discovery, kept between runs and read again
			// only when the server says it changed.
			apis := resultcache.OpenAPIs(o.cache.Sub(resultCacheDir))
			apis.Notef = o.warnf
			c.conn.Clients.KeepDiscovery(apis)
		}
	})
	return c.conn, c.err
}
