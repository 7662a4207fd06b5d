package dryrun

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"
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

// listGroup is one LIST, of a resource in a namespace, whose items are the live
// copies of several objects to preview. It is read when its turn in the window
// comes, and dropped once each of its objects took its copy.
type listGroup struct {
	key  listKey
	want int
	// done is closed once the list was read or given up on; items is then set
	// (nil: read each object with a GET instead).
	done chan struct{}

	mu    sync.Mutex
	items map[string]*unstructured.Unstructured
	// left counts the objects that have not taken their copy; holding says the
	// group holds its weight (want, at most the window) of the window.
	left    int
	holding bool
	window  *semaphore.Weighted
}

// weight is what the group holds of the window.
func (g *listGroup) weight() int64 { return min(int64(g.want), listWindow) }

// take hands an object its copy: ok is false when the list was not read (GET it).
// Every object of the group takes once, read or not, so the group leaves the window.
func (g *listGroup) take(name string) (obj *unstructured.Unstructured, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	obj, ok = g.items[name]
	ok = ok || g.items != nil
	delete(g.items, name)
	if g.left--; g.left == 0 {
		g.items = nil // the objects not previewed go with it
		if g.holding {
			g.holding = false
			g.window.Release(g.weight())
		}
	}
	return obj, ok
}

// listWindow bounds the live copies that lists read ahead of the objects that use
// them, so that a large run holds a few namespaces' copies at a time, not every one;
// within it, lists are read side by side.
var listWindow int64 = 2000

// planLists groups the results to send by resource and namespace, hands each group
// of at least listMin a LIST (Result.list), and starts reading the lists in the
// order their objects come, at most listWindow objects ahead. It returns the order
// to send results in: each group's objects together, where its first object was,
// so that the objects holding the window's room are always the next to be sent.
func planLists(ctx context.Context, c *Clients, results []Result, skip func(int) bool, opts Options) []int {
	order := make([]int, 0, len(results))
	if c.listForbidden.Load() {
		for i := range results {
			order = append(order, i)
		}
		return order
	}
	byKey := map[listKey]*listGroup{}
	groupOf := make([]*listGroup, len(results))
	members := map[*listGroup][]int{}
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
		g := byKey[k]
		if g == nil {
			g = &listGroup{key: k, done: make(chan struct{})}
			byKey[k] = g
		}
		groupOf[i] = g
		members[g] = append(members[g], i)
	}
	window := semaphore.NewWeighted(listWindow)
	var lists []*listGroup
	placed := map[*listGroup]bool{}
	for i := range results {
		g := groupOf[i]
		if g == nil {
			order = append(order, i)
			continue
		}
		if placed[g] {
			continue
		}
		placed[g] = true
		order = append(order, members[g]...)
		if len(members[g]) >= listMin {
			g.want, g.left, g.window = len(members[g]), len(members[g]), window
			for _, j := range members[g] {
				results[j].list = g
			}
			lists = append(lists, g)
		}
	}
	go readLists(ctx, c, lists, opts)
	return order
}

// readLists starts the lists in order, each once the window has room for it; a list
// whose objects all went without it (an error before their read) is not read.
func readLists(ctx context.Context, c *Clients, lists []*listGroup, opts Options) {
	for _, g := range lists {
		if !g.enter(ctx, c) {
			close(g.done)
			continue
		}
		go g.read(ctx, c, opts)
	}
}

// read reads the group's list and hands its items over (none: GETs).
func (g *listGroup) read(ctx context.Context, c *Clients, opts Options) {
	items, err := listAll(ctx, c, g.key, g.want, opts)
	if apierrors.IsForbidden(err) {
		// Said once per cluster: the first refusal turns LISTs off for the run.
		if !c.listForbidden.Swap(true) && opts.Warnf != nil {
			opts.Warnf("may not list %s%s: drift reads each object with a GET instead (grant list for fewer requests)", g.key.gvr.GroupResource(), inNamespace(g.key.namespace))
		}
	}
	g.mu.Lock()
	if err == nil && g.left > 0 {
		g.items = items // nil when the namespace is too crowded: GETs
	}
	g.mu.Unlock()
	close(g.done)
}

// enter takes room in the window for the group's list, unless the list is not
// needed or may not be read.
func (g *listGroup) enter(ctx context.Context, c *Clients) bool {
	if g.window.Acquire(ctx, g.weight()) != nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.left == 0 || c.listForbidden.Load() {
		g.window.Release(g.weight())
		return false
	}
	g.holding = true
	return true
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
	if g := r.list; attempt == 1 && g != nil {
		r.list = nil // used once: a second attempt reads again
		select {
		case <-g.done:
		case <-ctx.Done():
			g.take(r.ID.Name)
			return nil, context.Cause(ctx)
		}
		if obj, ok := g.take(r.ID.Name); ok {
			return obj, nil
		}
	}
	return Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return get(ctx, res, r.ID.Name, attempt == 1, opts)
	})
}
