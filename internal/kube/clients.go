package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Clients are drift's clients of one cluster, built once per run: discovery, the
// dynamic client, the REST mapper, and what the run learns about the cluster as it
// goes (a LIST refused, a server that went away).
type Clients struct {
	// Config is the configuration every client here was built from (the run's
	// deadline, retries and warning collection included).
	Config  *rest.Config
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources; it is filled from discovery once per run.
	Mapper meta.ResettableRESTMapper
	// Host is the API server's address, for messages.
	Host string
	// User is who requests run as, when known (impersonation), for messages.
	User string
	// discovery answers Reachable; cached answers the mapper and Capabilities, from
	// kept (the server's discovery, or what an earlier run kept: KeepDiscovery).
	discovery discovery.DiscoveryInterface
	cached    discovery.CachedDiscoveryInterface
	kept      *keptDiscovery
	// version is the server's gitVersion, once read.
	versionMu sync.Mutex
	version   string

	// Sleep waits between retries (Retry), or less when ctx ends: by default it
	// waits; a test hands in one that records the wait and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// ListAhead bounds the live copies that LISTs read ahead of the objects that use
	// them (Lists), so that a large run holds a few namespaces' copies at a time;
	// DefaultListAhead unless set.
	ListAhead int64

	aggOnce    sync.Once
	aggregated map[schema.GroupVersion]string
	// crdOnce reads the CRDs' metadata once: crds, or crdErr.
	crdOnce sync.Once
	crds    []metav1.PartialObjectMetadata
	crdErr  error
	// typed are the typed and raw clients (typed.go), made on first use.
	typed typed

	// down counts requests in a row that failed to connect after their retries (see
	// Retry).
	down atomic.Int32
	// listForbidden is set once a LIST was refused: the run reads with GETs.
	listForbidden atomic.Bool
}

// Capabilities returns the server's version and the API versions it serves, as
// "group/version" and "group/version/Kind", which is what Helm's .Capabilities holds.
func (c *Clients) Capabilities() (version string, apiVersions []string, err error) {
	version, err = c.serverVersion()
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
	return version, apiVersions, nil
}

// serverVersion is the server's gitVersion, asked once a run.
func (c *Clients) serverVersion() (string, error) {
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	if c.version != "" {
		return c.version, nil
	}
	v, err := c.discovery.ServerVersion()
	if err != nil {
		return "", err
	}
	c.version = v.GitVersion
	return c.version, nil
}

// Reachable asks the API server for its version once, so that a cluster that cannot be
// reached is one clear error for the run instead of one per object. When ctx ends
// first, the error is ctx's cause (the run's timeout) and where the run was.
func (c *Clients) Reachable(ctx context.Context) error {
	_, err := c.serverVersion()
	if err == nil {
		return nil
	}
	// The request carries the run's deadline and may see it pass a moment before ctx
	// does: ctx is then done at once.
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		<-ctx.Done()
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w while connecting to the API server at %s; raise --timeout, or check that the server answers", context.Cause(ctx), c.Host)
	}
	return fmt.Errorf("cannot reach the API server at %s: %w; check --kubeconfig/--context, or preview without a cluster with --cluster ephemeral --base REF", c.Host, err)
}

// NewClients builds clients from a REST config, whose requests end only by their own
// contexts and timeouts; drift's commands use NewClientsWithin.
func NewClients(cfg *rest.Config, concurrency int) (*Clients, error) {
	return NewClientsWithin(context.Background(), cfg, concurrency)
}

// NewClientsWithin builds clients from a REST config whose every request ends when run
// does, discovery's included (client-go sends those with a context of its own), so
// that the run's deadline bounds connecting as much as previewing. Client-side
// throttling is off: the pool of concurrency workers bounds the requests in flight,
// and the API server's own priority and fairness (429 with Retry-After) protects it.
func NewClientsWithin(run context.Context, cfg *rest.Config, _ int) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = warningCollector{}
	if run.Done() != nil {
		// Outside the retry transport, so that it sees the run's deadline.
		cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return &runBound{run: run, next: next} })
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client for %s: %w", cfg.Host, err)
	}
	dyn, err := newDynamic(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for %s: %w", cfg.Host, err)
	}
	kept := &keptDiscovery{DiscoveryClient: dc}
	cached := memory.NewMemCacheClient(kept)
	return &Clients{
		Config:    cfg,
		Dynamic:   dyn,
		Mapper:    newMemoMapper(restmapper.NewDeferredDiscoveryRESTMapper(cached)),
		Host:      cfg.Host,
		User:      cfg.Impersonate.UserName,
		Sleep:     sleepCtx,
		ListAhead: DefaultListAhead,
		discovery: dc,
		cached:    cached,
		kept:      kept,
	}, nil
}

// newDynamic is dynamic.NewForConfig with client-go's own retries turned off (Retry
// applies drift's policy to every request), reading answers in one pass
// (onePassSerializer).
func newDynamic(cfg *rest.Config) (dynamic.Interface, error) {
	config := dynamic.ConfigFor(cfg)
	config.NegotiatedSerializer = onePassSerializer{config.NegotiatedSerializer}
	config.GroupVersion = nil
	config.APIPath = "/if-you-see-this-search-for-the-break"
	rc, err := rest.UnversionedRESTClientFor(config)
	if err != nil {
		return nil, err
	}
	return dynamic.New(noClientRetries{rc}), nil
}

// runBound gives each request the run's deadline and ends it when the run ends.
type runBound struct {
	run  context.Context
	next http.RoundTripper
}

func (t *runBound) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(t.run, func() { cancel(context.Cause(t.run)) })
	release := func() { stop(); cancel(nil) }
	if deadline, ok := t.run.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		ctx, cancelDeadline = context.WithDeadline(ctx, deadline)
		release = func() { cancelDeadline(); stop(); cancel(nil) }
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		release()
		return nil, err
	}
	// The body is read after RoundTrip returns: the request lives until it is closed.
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// warningCollector hands the server's warning headers (deprecations, unknown fields)
// to the object whose request received them, through the request's context.
type warningCollector struct{}

type warningsKey struct{}

func (warningCollector) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, text string) {
	AddWarnings(ctx, text)
}

// AddWarnings hands warnings to ctx's Warnings (WithWarnings), as if the server had
// sent them to a request of ctx: a dry run answered from drift's cache gives the
// warnings its answer came with.
func AddWarnings(ctx context.Context, texts ...string) {
	sink, ok := ctx.Value(warningsKey{}).(*Warnings)
	if !ok {
		return
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, text := range texts {
		if !slices.Contains(sink.msgs, text) {
			sink.msgs = append(sink.msgs, text)
		}
	}
}

// Warnings are the server's warnings to the requests sent with a context of
// WithWarnings, each once, in the order they came.
type Warnings struct {
	mu   sync.Mutex
	msgs []string
}

// WithWarnings returns a context whose requests hand the server's warnings to w.
func WithWarnings(ctx context.Context) (context.Context, *Warnings) {
	w := &Warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

// Messages are the warnings received so far.
func (w *Warnings) Messages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}
