package dryrun

import (
	"context"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Reading by LIST: where many objects of a run share a resource and a namespace, one
// paged LIST reads their live copies instead of one GET each. The list is read from
// etcd (a consistent read), so an object it does not hold does not exist at its
// version; each dry-run apply is then checked against the version listed, as after
// a GET (settle: an answer of another resourceVersion means the object changed in
// between, and it is read again with a GET). GETs stay where the list would cost more
// than it saves: fewer than listMin objects, a namespace holding far more objects of
// the resource than are previewed (the first page's remainingItemCount says), or a
// user who may get but not list (said once per cluster, through Options.Warnf).
const (
	// listMin is the fewest objects of one resource and namespace read by LIST.
	listMin = 8
	// listPage is the LIST page size.
	listPage = 500
	// listSpare bounds what a LIST may read beyond the previewed objects: more than
	// listSpare times as many objects (and listPage more) and GETs are cheaper.
	listSpare = 4
)

// listKey is one resource in one namespace ("" for cluster-scoped resources).
type listKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// listed is a live copy read by LIST: obj is nil when the list did not hold it.
type listed struct {
	obj *unstructured.Unstructured
}

// prefetch reads by LIST the live copies of the results that share a resource and
// namespace with at least listMin others, and hands each its copy (Result.listed).
func prefetch(ctx context.Context, c *Clients, results []Result, skip func(int) bool, opts Options) {
	if c.listForbidden.Load() {
		return
	}
	groups := map[listKey][]int{}
	for i := range results {
		r := &results[i]
		if r.Err != nil || r.pendingCRD != nil || r.Object.Obj.GetName() == "" || (skip != nil && skip(i)) {
			continue
		}
		mapping, err := c.Mapper.RESTMapping(r.ID.GroupKind(), r.ID.Version)
		if err != nil {
			continue
		}
		k := listKey{gvr: mapping.Resource}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			k.namespace = r.ID.Namespace
		}
		groups[k] = append(groups[k], i)
	}
	g := &errgroup.Group{}
	g.SetLimit(opts.Concurrency)
	for k, idx := range groups {
		if len(idx) < listMin {
			continue
		}
		g.Go(func() error {
			items, err := listAll(ctx, c, k, len(idx), opts)
			switch {
			case apierrors.IsForbidden(err):
				// Said once per cluster: the first refusal turns LISTs off for the run.
				if !c.listForbidden.Swap(true) && opts.Warnf != nil {
					opts.Warnf("may not list %s%s: drift reads each object with a GET instead (grant list for fewer requests)", k.gvr.GroupResource(), inNamespace(k.namespace))
				}
				return nil
			case err != nil || items == nil:
				return nil // GETs, which report what goes wrong object by object
			}
			for _, i := range idx {
				results[i].listed = &listed{obj: items[results[i].ID.Name]}
			}
			clear(items) // the objects not previewed go with the pages
			return nil
		})
	}
	_ = g.Wait()
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}

// listAll reads every page of a LIST of k; nil (and no error) when the namespace holds
// too many objects of the resource for a LIST to pay for want previewed ones.
func listAll(ctx context.Context, c *Clients, k listKey, want int, opts Options) (map[string]*unstructured.Unstructured, error) {
	var res dynamic.ResourceInterface = c.Dynamic.Resource(k.gvr)
	if k.namespace != "" {
		res = c.Dynamic.Resource(k.gvr).Namespace(k.namespace)
	}
	items := map[string]*unstructured.Unstructured{}
	cont, read := "", 0
	for {
		page, err := Retry(ctx, c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
			ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
			defer cancel()
			return res.List(ctx, metav1.ListOptions{Limit: listPage, Continue: cont})
		})
		if err != nil {
			return nil, err
		}
		// Too many: the first page's remainingItemCount says so, or, where the server
		// does not count, the pages read so far.
		limit := listSpare*want + listPage
		if rem := page.GetRemainingItemCount(); cont == "" && rem != nil && int(*rem)+len(page.Items) > limit {
			return nil, nil
		}
		if read += len(page.Items); read > limit {
			return nil, nil
		}
		for _, it := range page.Items {
			// A copy of the item (its map is shared): a pointer into page.Items would
			// keep every object of the page alive, those not previewed too.
			items[it.GetName()] = &it
		}
		if cont = page.GetContinue(); cont == "" {
			return items, nil
		}
	}
}

// read returns the live object for an attempt at previewing r: on the first, the copy
// a LIST read if there is one, else a GET (from the watch cache on the first attempt).
func read(ctx context.Context, c *Clients, res dynamic.ResourceInterface, r *Result, attempt int, opts Options) (*unstructured.Unstructured, error) {
	if attempt == 1 && r.listed != nil {
		obj := r.listed.obj
		r.listed = nil // used once: a second attempt reads again
		if obj == nil {
			return nil, nil
		}
		return obj, nil
	}
	return Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return get(ctx, res, r.ID.Name, attempt == 1, opts)
	})
}
