package dryrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/resultcache"
)

// Options control a dry-run.
type Options struct {
	// Applier is what applies the objects for real; the run sends each object as it
	// does. It must be set.
	Applier applier.Applier
	// Owner is what that applier knows the objects by (a Kustomization, an
	// Application, a Helm release).
	Owner applier.Owner
	// Appliers are the appliers the run knows, whose field managers on a live object
	// tell that another applier than Applier applies it (nil: none is told).
	Appliers *applier.Registry
	// FieldManager replaces the applier's field manager where the applier lets users
	// choose it (kubectl's --field-manager); "" keeps the applier's.
	FieldManager string
	// ForceConflicts applies forced from the start, as --force-conflicts does.
	ForceConflicts bool
	// Namespace is the default for namespaced objects that name none.
	Namespace string
	// RequireNamespace says the applier defaults no namespace (kustomize-controller
	// applying a Kustomization without targetNamespace): a namespaced object that
	// names none is refused, as Flux refuses it ("namespace not specified").
	RequireNamespace bool
	// CopySecrets lets an operator-filled Secret be filled from the cluster's Secret
	// it names (flux-operator's copyFrom); without it, it is taken as the cluster
	// holds it.
	CopySecrets bool
	// Concurrency bounds the requests in flight (objects previewed at once).
	Concurrency int
	// RequestTimeout bounds each request.
	RequestTimeout time.Duration
	// Progress, when set, is called after each object with the count done so far.
	Progress func(done, total int)
	// Absent lists objects that the server has only so that others can be previewed
	// (an ephemeral server seeded with a namespace the change adds): they are previewed
	// as usual and reported as additions.
	Absent map[object.Key]bool
	// Pending is what the change creates that other objects may need (namespaces,
	// CRDs); nil means nothing.
	Pending *Pending
	// DryRunAggregated sends objects served by aggregated API servers too; by default
	// they are not sent, since such servers may not honour dryRun.
	DryRunAggregated bool
	// Warnf, when set, is told what the run goes on without (a LIST refused, once).
	Warnf func(format string, args ...any)
	// Finished, when set, is called with each object's result as soon as its preview
	// is done, from the worker that previewed it; it may drop from the result what its
	// reader will not need, so that a large run holds less. i is the object's index.
	Finished func(i int, r *Result)
	// Cache, when set, answers the dry runs whose key it holds without sending them,
	// and keeps the answers of those it sends (resultcache).
	Cache *resultcache.Cluster
	// CacheSecretsOnly lets Cache answer only Secrets (whose every data value the
	// cache hides): for the objects sent before the run knows the values it must
	// hide in the others.
	CacheSecretsOnly bool
	// Skip, when set, names the objects (by index) that another runner previews
	// (drift --shard): they are planned with the rest, so that identities and
	// duplicates are resolved over all objects, but never sent; their results hold
	// only what planning found.
	Skip func(i int) bool
}

// maxVersionRetries bounds how often an object that changed between GET and PATCH is
// read and previewed again.
const maxVersionRetries = 3

// Run previews every object and returns one result per object, in input order. It
// never stops early: an object whose preview fails gets an error result, and when ctx
// ends the objects not yet previewed are marked not checked.
func Run(ctx context.Context, c *kube.Clients, objs []render.Object, opts Options) []Result {
	results := Plan(c, objs, opts)
	Send(ctx, c, results, opts)
	return results
}

// Plan resolves each object's kind to a resource, defaults its namespace, and fails
// what cannot be sent (duplicates, unknown kinds, kinds of aggregated API servers),
// without a request but for discovery. Its results hold identities only; Send fills
// them in.
func Plan(c *kube.Clients, objs []render.Object, opts Options) []Result {
	opts = opts.WithDefaults()
	results := plan(c, objs, opts.Namespace, opts.Pending, opts.RequireNamespace)
	if !opts.DryRunAggregated {
		holdAggregated(c, results)
	}
	return results
}

// Send previews the planned results that planning did not fail and opts.Skip does not
// name, at most opts.Concurrency at a time: a Batch of one round.
func Send(ctx context.Context, c *kube.Clients, results []Result, opts Options) {
	b := NewBatch(c, opts.WithDefaults().Concurrency)
	b.Add(0, results, opts)
	b.Send(ctx, nil)
}

// WithDefaults fills in what was left unset.
func (o Options) WithDefaults() Options {
	if o.Applier == nil {
		panic("dryrun: Options.Applier is not set")
	}
	o.FieldManager = o.Applier.Sending().ManagerFor(o.FieldManager)
	o.ForceConflicts = o.ForceConflicts || o.Applier.Sending().Force
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = kube.DefaultRequestTimeout
	}
	return o
}

// notChecked is the error of an object the run's end (its deadline, a signal)
// left unsent.
func notChecked(ctx context.Context) *Message {
	msg := fmt.Sprintf("not checked: the run ended before this object's turn (%v)", context.Cause(ctx))
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		msg += "; raise --timeout"
	}
	return &Message{Reason: reason.NotChecked, Message: msg}
}

// plan resolves each object's kind to a resource, defaults its namespace, and marks
// objects that end up with the same identity.
func plan(c *kube.Clients, objs []render.Object, defaultNS string, pending *Pending, requireNS bool) []Result {
	results := make([]Result, len(objs))
	seen := map[object.Key]int{}
	refreshed := false
	for i, o := range objs {
		r := &results[i]
		r.Object = o
		r.ID = o.ID()
		if r.Err = invalidIdentity(r, nil); r.Err != nil {
			continue
		}
		mapping, err := c.Mapper.RESTMapping(r.ID.GroupKind(), r.ID.Version)
		if meta.IsNoMatchError(err) && !refreshed {
			// The discovery cache may predate a CRD created a moment ago: refresh once.
			refreshed = true
			c.Mapper.Reset()
			mapping, err = c.Mapper.RESTMapping(r.ID.GroupKind(), r.ID.Version)
		}
		var namespaced bool
		switch crd, ver := pending.crdFor(r.ID.GroupKind(), r.ID.Version); {
		case err == nil:
			namespaced = mapping.Scope.Name() == meta.RESTScopeNameNamespace
		case meta.IsNoMatchError(err) && crd != nil && ver != nil:
			namespaced = crd.Namespaced
			r.pendingCRD, r.pendingVer = crd, ver
		default:
			r.Err = mappingError(r.ID, err)
			continue
		}
		switch {
		case namespaced && r.ID.Namespace == "" && requireNS:
			r.Err = &Message{Reason: reason.Invalid, Message: fmt.Sprintf("%s %s has no metadata.namespace, and the Kustomization that applies it sets no targetNamespace: "+
				"kustomize-controller defaults none, and refuses it and everything the Kustomization applies (namespace not specified); set metadata.namespace or spec.targetNamespace", r.ID.Kind, r.ID.Name)}
			continue
		case namespaced && r.ID.Namespace == "":
			r.ID.Namespace = defaultNS
			if r.Err = invalidDefaultNamespace(defaultNS); r.Err != nil {
				continue
			}
		case !namespaced && r.ID.Namespace != "":
			r.Err = &Message{Reason: reason.Invalid, Message: fmt.Sprintf("%s is cluster-scoped but sets metadata.namespace %q: remove the namespace", r.ID.Kind, r.ID.Namespace)}
			continue
		}
		// Bytes that are not base64 fail the object; it is still checked for duplicates.
		r.Err = notBase64(r)
		if o.Name() == "" {
			continue // generateName: never a duplicate
		}
		if j, dup := seen[r.ID.Key()]; dup {
			msg := fmt.Sprintf("%s is defined twice once namespaces are defaulted: at %s and %s; keep one definition", r.ID.Display(), objs[j].Where(), o.Where())
			r.Err = &Message{Reason: reason.Duplicate, Message: msg}
			if results[j].Err == nil {
				results[j].Err = &Message{Reason: reason.Duplicate, Message: msg}
			}
			continue
		}
		seen[r.ID.Key()] = i
	}
	return results
}

// holdAggregated fails, without sending them, the objects whose kind an aggregated
// API server serves.
func holdAggregated(c *kube.Clients, results []Result) {
	var agg map[schema.GroupVersion]string
	for i := range results {
		r := &results[i]
		if r.Err != nil && r.Err.Reason != reason.UnknownKind {
			continue
		}
		if agg == nil {
			agg = c.AggregatedAPIs()
		}
		gv := schema.GroupVersion{Group: r.ID.Group, Version: r.ID.Version}
		if svc, ok := agg[gv]; ok {
			r.Err = aggregatedError(gv, svc)
		}
	}
}
