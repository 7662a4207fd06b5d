package kube

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Reading by LIST: where many objects of a run share a resource and a namespace, one
// paged LIST reads their live copies instead of one GET each. The list is read from
// etcd (a consistent read), so an object it does not hold does not exist at its
// version; whoever uses a listed copy must still detect a change since (drift's dry
// runs compare the answer's resourceVersion with the one listed, and read again with
// a GET). GETs stay where the list would cost more than it saves: fewer than ListMin
// objects, a namespace holding far more objects of the resource than are read (the
// first page's remainingItemCount says), or a user who may get but not list (said
// once per cluster, through the reader's warnf).
const (
	// ListMin is the fewest objects of one resource and namespace read by LIST.
	ListMin = 8
	// ListPage is the LIST page size.
	ListPage = 500
	// ListSpare bounds what a LIST may read beyond the objects wanted: more than
	// ListSpare times as many objects (and ListPage more) and GETs are cheaper.
	ListSpare = 4
	// DefaultListAhead is Clients.ListAhead's default.
	DefaultListAhead int64 = 2000
)

// ListKey is one resource in one namespace ("" for cluster-scoped resources).
type ListKey struct {
	GVR       schema.GroupVersionResource
	Namespace string
}

// List is one LIST, of a resource in a namespace, whose items are the live copies of
// several objects. It is read when its turn in the reader's window comes, and dropped
// once each of its objects took its copy (Take).
type List struct {
	key  ListKey
	want int
	// done is closed once the list was read or given up on; items is then set
	// (nil: read each object with a GET instead).
	done chan struct{}

	mu    sync.Mutex
	items map[string]*unstructured.Unstructured
	// left counts the objects that have not taken their copy; holding says the
	// list holds its weight (want, at most the window) of the window.
	left    int
	holding bool
	window  *semaphore.Weighted
	ahead   int64
}

// weight is what the list holds of the window.
func (l *List) weight() int64 { return min(int64(l.want), l.ahead) }

// Take hands an object its copy: ok is false when the list was not read (GET it).
// Every object of the list takes once, read or not, so that the list leaves the
// window.
func (l *List) Take(name string) (obj *unstructured.Unstructured, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	obj, ok = l.items[name]
	ok = ok || l.items != nil
	delete(l.items, name)
	if l.left--; l.left == 0 {
		l.items = nil // the objects not taken go with it
		if l.holding {
			l.holding = false
			l.window.Release(l.weight())
		}
	}
	return obj, ok
}

// Wait waits until the list was read or given up on; it returns ctx's cause when ctx
// ends first.
func (l *List) Wait(ctx context.Context) error {
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Lists reads LISTs in the order they were added, at most c.ListAhead objects ahead
// of the objects that take their copies; within that window they are read side by
// side.
type Lists struct {
	c      *Clients
	window *semaphore.Weighted
	lists  []*List
}

// NewLists starts planning the LISTs of a run on c. It returns nil once a LIST was
// refused on c: the run reads with GETs.
func (c *Clients) NewLists() *Lists {
	if c.listForbidden.Load() {
		return nil
	}
	ahead := c.ListAhead
	if ahead <= 0 {
		ahead = DefaultListAhead
	}
	return &Lists{c: c, window: semaphore.NewWeighted(ahead)}
}

// Add plans the LIST that want objects of key read their copies from; nil when they
// are too few for a LIST to pay for itself (fewer than ListMin).
func (ls *Lists) Add(key ListKey, want int) *List {
	if ls == nil || want < ListMin {
		return nil
	}
	l := &List{key: key, want: want, left: want, done: make(chan struct{}), window: ls.window, ahead: ls.c.ListAhead}
	if l.ahead <= 0 {
		l.ahead = DefaultListAhead
	}
	ls.lists = append(ls.lists, l)
	return l
}

// Start starts reading the lists in order, each once the window has room for it; a
// list whose objects all went without it (an error before their read) is not read.
// timeout bounds each page's request; warnf, when set, is told once per cluster that
// a LIST was refused.
func (ls *Lists) Start(ctx context.Context, timeout time.Duration, warnf func(string, ...any)) {
	if ls == nil {
		return
	}
	go func() {
		for _, l := range ls.lists {
			if !l.enter(ctx, ls.c) {
				close(l.done)
				continue
			}
			go l.read(ctx, ls.c, timeout, warnf)
		}
	}()
}

// read reads the list and hands its items over (none: GETs).
func (l *List) read(ctx context.Context, c *Clients, timeout time.Duration, warnf func(string, ...any)) {
	items, err := listAll(ctx, c, l.key, l.want, timeout)
	if apierrors.IsForbidden(err) {
		// Said once per cluster: the first refusal turns LISTs off for the run.
		if !c.listForbidden.Swap(true) && warnf != nil {
			warnf("may not list %s%s: drift reads each object with a GET instead (grant list for fewer requests)", l.key.GVR.GroupResource(), inNamespace(l.key.Namespace))
		}
	}
	l.mu.Lock()
	if err == nil && l.left > 0 {
		l.items = items // nil when the namespace is too crowded: GETs
	}
	l.mu.Unlock()
	close(l.done)
}

// enter takes room in the window for the list, unless the list is not needed or
// may not be read.
func (l *List) enter(ctx context.Context, c *Clients) bool {
	if l.window.Acquire(ctx, l.weight()) != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left == 0 || c.listForbidden.Load() {
		l.window.Release(l.weight())
		return false
	}
	l.holding = true
	return true
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}

// listAll reads every page of a LIST of k; nil (and no error) when the namespace holds
// too many objects of the resource for a LIST to pay for want read ones.
func listAll(ctx context.Context, c *Clients, k ListKey, want int, timeout time.Duration) (map[string]*unstructured.Unstructured, error) {
	var res dynamic.ResourceInterface = c.Dynamic.Resource(k.GVR)
	if k.Namespace != "" {
		res = c.Dynamic.Resource(k.GVR).Namespace(k.Namespace)
	}
	items := map[string]*unstructured.Unstructured{}
	cont, read := "", 0
	for {
		page, err := Retry(ctx, c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return res.List(ctx, metav1.ListOptions{Limit: ListPage, Continue: cont})
		})
		if err != nil {
			return nil, err
		}
		// Too many: the first page's remainingItemCount says so, or, where the server
		// does not count, the pages read so far.
		limit := ListSpare*want + ListPage
		if rem := page.GetRemainingItemCount(); cont == "" && rem != nil && int(*rem)+len(page.Items) > limit {
			return nil, nil
		}
		if read += len(page.Items); read > limit {
			return nil, nil
		}
		for _, it := range page.Items {
			// A copy of the item (its map is shared): a pointer into page.Items would
			// keep every object of the page alive, those not read too.
			items[it.GetName()] = &it
		}
		if cont = page.GetContinue(); cont == "" {
			return items, nil
		}
	}
}
