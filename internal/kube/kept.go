package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// DiscoveryKeeper keeps a cluster's API discovery between runs (drift's cache
// directory, sealed with its key): Load is what was kept under key, Keep replaces it.
type DiscoveryKeeper interface {
	Load(key string) ([]byte, bool)
	Keep(key string, data []byte)
}

// keptFormat is the version of a kept discovery record.
const keptFormat = 2

// maxDiscoveryBytes bounds a discovery document read (a cluster with many CRDs
// serves a few MiB).
const maxDiscoveryBytes = 64 << 20

// keptRecord is a cluster's aggregated discovery documents (/api and /apis) as the
// server sent them, each with the ETag it sent.
type keptRecord struct {
	Format int          `json:"format"`
	API    keptDocument `json:"api"`
	APIs   keptDocument `json:"apis"`
}

type keptDocument struct {
	ETag string          `json:"etag"`
	Body json.RawMessage `json:"body"`
}

var aggregatedGVK = schema.GroupVersionKind{Group: "apidiscovery.k8s.io", Version: "v2", Kind: "APIGroupDiscoveryList"}

// errNotAggregated is a server that answers discovery in another form than the
// aggregated one: it is read as client-go reads it, and nothing is kept.
var errNotAggregated = errors.New("the server's discovery is not aggregated")

// keptDiscovery is the discovery the run's mapper and capabilities read. Without a
// keeper, client-go's. With one (KeepDiscovery), it asks for /api and /apis side by
// side, in the aggregated form only, each with the ETag of what an earlier run kept
// (If-None-Match): the server answers 304 Not Modified, with no body, while what it
// serves hashes the same, and the kept document is read; else it sends the new one,
// which is read and kept. Any other answer is read as client-go reads discovery,
// and nothing is kept. Invalidate (a kind the mapper did not find) sends every later
// read to client-go's discovery.
type keptDiscovery struct {
	*discovery.DiscoveryClient

	mu          sync.Mutex
	keeper      DiscoveryKeeper
	key         string
	invalidated bool
	// taken counts the documents read from the kept record (the server said 304).
	taken int
}

// KeepDiscovery has the run's API discovery revalidated against, and kept by,
// keeper between runs, under the server's address. It must be called before the
// first mapping.
func (c *Clients) KeepDiscovery(keeper DiscoveryKeeper) {
	c.kept.mu.Lock()
	defer c.kept.mu.Unlock()
	c.kept.keeper, c.kept.key = keeper, c.Host
}

// DiscoveryTaken is how many of the run's discovery documents (/api, /apis) were
// read from the kept record, the server having said they had not changed.
func (c *Clients) DiscoveryTaken() int {
	c.kept.mu.Lock()
	defer c.kept.mu.Unlock()
	return c.kept.taken
}

func (d *keptDiscovery) GroupsAndMaybeResources() (*metav1.APIGroupList, map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	return d.GroupsAndMaybeResourcesWithContext(context.Background())
}

// GroupsAndMaybeResourcesWithContext is the server's discovery: revalidated against
// the kept record when there is a keeper, else client-go's.
func (d *keptDiscovery) GroupsAndMaybeResourcesWithContext(ctx context.Context) (*metav1.APIGroupList, map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	d.mu.Lock()
	keeper, invalidated := d.keeper, d.invalidated
	d.mu.Unlock()
	if keeper != nil && !invalidated {
		groups, resources, failed, err := d.revalidated(ctx, keeper)
		if err == nil {
			return groups, resources, failed, nil
		}
		if ctx.Err() != nil {
			return nil, nil, nil, err
		}
	}
	return d.DiscoveryClient.GroupsAndMaybeResourcesWithContext(ctx)
}

// revalidated reads /api and /apis side by side, each the kept document when the
// server says it has not changed, and keeps what changed.
func (d *keptDiscovery) revalidated(ctx context.Context, keeper DiscoveryKeeper) (*metav1.APIGroupList, map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	var rec keptRecord
	if data, ok := keeper.Load(d.key); !ok || json.Unmarshal(data, &rec) != nil || rec.Format != keptFormat {
		rec = keptRecord{}
	}
	docs := []*keptDocument{&rec.API, &rec.APIs}
	paths := []string{"/api", "/apis"}
	changed := make([]bool, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range docs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			changed[i], errs[i] = d.fetch(ctx, paths[i], docs[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, nil, err
	}
	groups := &metav1.APIGroupList{}
	resources := map[schema.GroupVersion]*metav1.APIResourceList{}
	failed := map[schema.GroupVersion]error{}
	for _, doc := range docs {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(doc.Body, &list); err != nil {
			return nil, nil, nil, fmt.Errorf("reading the server's discovery: %w", err)
		}
		g, r, f := discovery.SplitGroupsAndResources(list)
		groups.Groups = append(groups.Groups, g.Groups...)
		for gv, rl := range r {
			resources[gv] = rl
		}
		for gv, err := range f {
			failed[gv] = err
		}
	}
	d.mu.Lock()
	for _, c := range changed {
		if !c {
			d.taken++
		}
	}
	d.mu.Unlock()
	if changed[0] || changed[1] {
		rec.Format = keptFormat
		if data, err := json.Marshal(rec); err == nil {
			keeper.Keep(d.key, data)
		}
	}
	return groups, resources, failed, nil
}

// fetch asks for the aggregated discovery document at path, with doc's ETag when it
// has one; it fills doc with the server's answer and reports whether it changed.
func (d *keptDiscovery) fetch(ctx context.Context, path string, doc *keptDocument) (changed bool, err error) {
	rc, ok := d.DiscoveryClient.RESTClient().(*rest.RESTClient)
	if !ok || rc.Client == nil {
		return false, errNotAggregated
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rc.Get().AbsPath(path).URL().String(), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", discovery.AcceptV2)
	if doc.ETag != "" && len(doc.Body) > 0 {
		req.Header.Set("If-None-Match", doc.ETag)
	}
	resp, err := rc.Client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && req.Header.Get("If-None-Match") != "" {
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if isAggregated, _ := discovery.ContentTypeIsGVK(resp.Header.Get("Content-Type"), aggregatedGVK); !isAggregated {
		return false, errNotAggregated
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBytes+1))
	if err != nil {
		return false, err
	}
	if len(body) > maxDiscoveryBytes || !json.Valid(body) {
		return false, fmt.Errorf("GET %s: not a discovery document", path)
	}
	doc.ETag, doc.Body = resp.Header.Get("ETag"), body
	return true, nil
}

func (d *keptDiscovery) Fresh() bool { return d.FreshWithContext(context.Background()) }

// FreshWithContext is true: every read asks the server, and a miss invalidates.
func (d *keptDiscovery) FreshWithContext(context.Context) bool { return true }

func (d *keptDiscovery) Invalidate() { d.InvalidateWithContext(context.Background()) }

// InvalidateWithContext sends every later read to client-go's discovery.
func (d *keptDiscovery) InvalidateWithContext(context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.invalidated = true
}

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDs are the cluster's CustomResourceDefinitions, metadata only (a CRD's name is
// its plural and group), read once a run, page by page, for the dry-run cache's
// key: a cluster's CRDs whole weigh megabytes (their schemas), their metadata does
// not.
func (c *Clients) CRDs(ctx context.Context) ([]metav1.PartialObjectMetadata, error) {
	c.crdOnce.Do(func() {
		opts := metav1.ListOptions{Limit: 500}
		for {
			page, err := c.ListMetadata(ctx, crdsGVR, opts)
			if err != nil {
				c.crds, c.crdErr = nil, fmt.Errorf("listing customresourcedefinitions.apiextensions.k8s.io: %w", err)
				return
			}
			c.crds = append(c.crds, page.Items...)
			if opts.Continue = page.GetContinue(); opts.Continue == "" {
				return
			}
		}
	})
	return c.crds, c.crdErr
}
