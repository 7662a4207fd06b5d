package dryrun

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/resultcache"
)

// cached is what an applier sends one object through when the run keeps answers
// (Options.Cache): a request whose key the store holds is answered from it without
// being sent, with the warnings the server gave; any other is sent, and its answer
// stored when it succeeded. Errors are never stored: the next run sends again.
type cached struct {
	*server
	cache *resultcache.Cluster
	req   resultcache.Request
}

// cachedFor wraps s for r when the cache may answer for it: nil when it may not.
func cachedFor(c *kube.Clients, s *server, r *Result, opts Options) *cached {
	if opts.Cache == nil {
		return nil
	}
	mapping, err := c.Mapper.RESTMapping(r.ID.GroupKind(), r.ID.Version)
	if err != nil {
		return nil
	}
	ns := ""
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns = r.ID.Namespace
	}
	gr := mapping.Resource.GroupResource()
	if opts.CacheSecretsOnly && gr != (schema.GroupResource{Resource: "secrets"}) {
		return nil
	}
	if opts.Cache.Cacheable(gr, ns) != "" {
		return nil
	}
	return &cached{server: s, cache: opts.Cache, req: resultcache.Request{Resource: gr, Namespace: ns,
		Applier: string(opts.Applier.Name()), Manager: opts.FieldManager, Force: opts.ForceConflicts}}
}

// through is what one attempt sends obj through, having read live: the cache, unless
// a webhook or a policy with parameters may see the object (whose answers depend on
// what drift cannot key on); then the server itself.
func (c *cached) through(obj, live *unstructured.Unstructured) applier.Server {
	sets := []labels.Set{labels.Set(obj.GetLabels())}
	if live != nil {
		merged := labels.Merge(labels.Set(live.GetLabels()), labels.Set(obj.GetLabels()))
		sets = append(sets, labels.Set(live.GetLabels()), merged)
	}
	if c.cache.Intercepted(c.req.Resource, c.req.Namespace, sets...) {
		return c.server
	}
	cp := *c
	cp.req.Live = live
	return &cp
}

func (c *cached) Apply(ctx context.Context, body []byte, force bool) (*unstructured.Unstructured, error) {
	req := c.req
	req.Method, req.Force, req.Body = "apply "+c.opts.Applier.Sending().Validation(), force, body
	return c.answer(ctx, req, func(ctx context.Context) (*unstructured.Unstructured, error) { return c.server.Apply(ctx, body, force) })
}

func (c *cached) Create(ctx context.Context, obj *unstructured.Unstructured, validation string) (*unstructured.Unstructured, error) {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return c.server.Create(ctx, obj, validation)
	}
	req := c.req
	req.Method, req.Body = "create "+validation, body
	return c.answer(ctx, req, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return c.server.Create(ctx, obj, validation)
	})
}

func (c *cached) Patch(ctx context.Context, pt types.PatchType, patch []byte, validation string) (*unstructured.Unstructured, error) {
	req := c.req
	req.Method, req.Body = "patch "+string(pt)+" "+validation, patch
	return c.answer(ctx, req, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return c.server.Patch(ctx, pt, patch, validation)
	})
}

func (c *cached) Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return c.server.Update(ctx, obj)
	}
	req := c.req
	req.Method, req.Body = "update", body
	return c.answer(ctx, req, func(ctx context.Context) (*unstructured.Unstructured, error) { return c.server.Update(ctx, obj) })
}

// answer answers req from the store, or sends it and stores what the server answered.
// The server's warnings reach the object's warnings either way.
func (c *cached) answer(ctx context.Context, req resultcache.Request, send func(context.Context) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	if a, ok := c.cache.Get(req); ok {
		kube.AddWarnings(ctx, a.Warnings...)
		return a.Merged, nil
	}
	reqCtx, warnings := kube.WithWarnings(ctx)
	merged, err := send(reqCtx)
	msgs := warnings.Messages()
	kube.AddWarnings(ctx, msgs...)
	if err == nil && merged != nil {
		// Stored from what the server answered, before the applier goes on with it.
		c.cache.Put(req, resultcache.Answer{Merged: merged, Warnings: msgs})
	}
	return merged, err
}

var _ applier.Server = (*cached)(nil)
