package dryrun

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Clients is what the dry-run needs of a cluster.
type Clients struct {
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources; it is filled from discovery once per run.
	Mapper meta.ResettableRESTMapper
	// Host is the API server's address, for messages.
	Host string
	// User is who requests run as, when known (impersonation), for messages.
	User string
	// discovery answers Reachable; cached answers the mapper and Capabilities.
	discovery discovery.DiscoveryInterface
	cached    discovery.CachedDiscoveryInterface

	aggOnce    sync.Once
	aggregated map[schema.GroupVersion]string
}

// Capabilities returns the server's version and the API versions it serves, as
// "group/version" and "group/version/Kind", which is what Helm's .Capabilities holds.
func (c *Clients) Capabilities() (version string, apiVersions []string, err error) {
	v, err := c.discovery.ServerVersion()
	if err != nil {
		return "", nil, fmt.Errorf("cannot read the version of the API server at %s: %w", c.Host, err)
	}
	groups, resources, err := c.cached.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return "", nil, fmt.Errorf("cannot list the APIs of the API server at %s: %w", c.Host, err)
	}
	seen := map[string]bool{}
	for _, g := range groups {
		for _, gv := range g.Versions {
			seen[gv.GroupVersion] = true
		}
	}
	for _, rl := range resources {
		for _, r := range rl.APIResources {
			seen[rl.GroupVersion+"/"+r.Kind] = true
		}
	}
	for k := range seen {
		apiVersions = append(apiVersions, k)
	}
	sort.Strings(apiVersions)
	return v.GitVersion, apiVersions, nil
}

// Reachable asks the API server for its version once, so that a cluster that cannot be
// reached is one clear error for the run instead of one per object.
func (c *Clients) Reachable() error {
	if _, err := c.discovery.ServerVersion(); err != nil {
		return fmt.Errorf("cannot reach the API server at %s: %w; check --kubeconfig/--context, or preview without a cluster with --cluster ephemeral --base REF", c.Host, err)
	}
	return nil
}

// NewClients builds clients from a REST config. Client-side throttling is off: the
// pool of concurrency workers bounds the requests in flight, and the API server's own
// priority and fairness (429 with Retry-After) protects it.
func NewClients(cfg *rest.Config, _ int) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = warningCollector{}
	cfg.Wrap(newRetryTransport)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client for %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for %s: %w", cfg.Host, err)
	}
	cached := memory.NewMemCacheClient(dc)
	return &Clients{
		Dynamic:   dyn,
		Mapper:    restmapper.NewDeferredDiscoveryRESTMapper(cached),
		Host:      cfg.Host,
		User:      cfg.Impersonate.UserName,
		discovery: dc,
		cached:    cached,
	}, nil
}

// warningCollector hands the server's warning headers (deprecations, unknown fields)
// to the object whose request received them, through the request's context.
type warningCollector struct{}

type warningsKey struct{}

type warningSink struct {
	mu   sync.Mutex
	msgs []string
}

func (warningCollector) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, text string) {
	sink, ok := ctx.Value(warningsKey{}).(*warningSink)
	if !ok {
		return
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, m := range sink.msgs {
		if m == text {
			return
		}
	}
	sink.msgs = append(sink.msgs, text)
}

func withWarningSink(ctx context.Context) (context.Context, *warningSink) {
	sink := &warningSink{}
	return context.WithValue(ctx, warningsKey{}, sink), sink
}
