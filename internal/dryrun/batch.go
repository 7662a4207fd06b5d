package dryrun

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/drift-gitops/drift/internal/kube"
)

// Batch sends one cluster's objects, those of every target on it, through one pool
// of workers, so that the cluster has at most the batch's concurrency requests in
// flight and no target waits for another's slowest object. Objects are added in
// rounds: every object of a round is handed to a worker before any of the next, so
// a round's last objects overlap the next round's first, and the batch says when
// the last object of a round is done (Send's roundDone).
//
// LISTs are planned across the batch, per round: the objects of one resource and
// namespace read their live copies from one LIST whichever target they belong to,
// and the lists are read ahead of the objects in the order they are sent.
type Batch struct {
	c           *kube.Clients
	concurrency int
	rounds      [][]work
}

// work is one target's objects of a round: results sent under opts, those skip does
// not name.
type work struct {
	results []Result
	opts    Options
	skip    func(int) bool
}

// NewBatch starts a batch on c with at most concurrency objects in flight (16 when
// not set).
func NewBatch(c *kube.Clients, concurrency int) *Batch {
	if concurrency <= 0 {
		concurrency = 16
	}
	return &Batch{c: c, concurrency: concurrency}
}

// Add adds round's share of a target's planned results: those planning did not fail
// and opts.Skip does not name, sent under opts (its Concurrency is the batch's).
func (b *Batch) Add(round int, results []Result, opts Options) {
	for len(b.rounds) <= round {
		b.rounds = append(b.rounds, nil)
	}
	b.rounds[round] = append(b.rounds[round], work{results: results, opts: opts.WithDefaults(), skip: opts.Skip})
}

// item is one object of a round.
type item struct {
	w *work
	i int
}

// Send sends every object added, round after round, and returns once all are done;
// roundDone, when set, is called with each round's number once its last object is
// done, in round order, each once (a round with no object too), from a goroutine of
// its own so that the workers go on meanwhile. When ctx ends, the objects not yet
// sent are marked not checked.
func (b *Batch) Send(ctx context.Context, roundDone func(round int)) {
	lists := b.c.NewLists()
	orders := make([][]item, len(b.rounds))
	for r := range b.rounds {
		orders[r] = b.plan(r, lists)
	}
	if w := b.first(); lists != nil && w != nil {
		lists.Start(ctx, w.opts.RequestTimeout, w.opts.Warnf)
	}
	// Each round's objects not done yet; done rounds go to the caller in order.
	left := make([]int, len(orders))
	for r, order := range orders {
		left[r] = len(order)
	}
	done := make(chan int, len(orders))
	var mu sync.Mutex
	reported := 0
	report := func() { // mu held
		for reported < len(left) && left[reported] == 0 {
			done <- reported
			reported++
		}
	}
	told := make(chan struct{})
	go func() {
		defer close(told)
		for r := range done {
			if roundDone != nil {
				roundDone(r)
			}
		}
	}()
	progress := map[*work]*[2]int{}
	for _, order := range orders {
		for _, it := range order {
			if progress[it.w] == nil {
				progress[it.w] = &[2]int{}
			}
			progress[it.w][1]++
		}
	}
	mu.Lock()
	report() // the empty rounds first
	mu.Unlock()
	g := &errgroup.Group{}
	g.SetLimit(b.concurrency)
	for r, order := range orders {
		for _, it := range order {
			g.Go(func() error {
				sendOne(ctx, b.c, it.w, it.i)
				mu.Lock()
				defer mu.Unlock()
				if p := progress[it.w]; it.w.opts.Progress != nil {
					p[0]++
					it.w.opts.Progress(p[0], p[1])
				}
				left[r]--
				report()
				return nil
			})
		}
	}
	_ = g.Wait()
	close(done)
	<-told
}

// first is the batch's first work, nil when it has none.
func (b *Batch) first() *work {
	for r := range b.rounds {
		if len(b.rounds[r]) > 0 {
			return &b.rounds[r][0]
		}
	}
	return nil
}

// sendOne previews the i-th result of w.
func sendOne(ctx context.Context, c *kube.Clients, w *work, i int) {
	r := &w.results[i]
	ran := ctx.Err() == nil
	switch {
	case ran && r.Same:
		// Unchanged without a request.
	case ran:
		preview(ctx, c, r, w.opts)
	default:
		r.Err = notChecked(ctx)
	}
	if r.list != nil { // never read: its list may go
		r.list.Take(r.ID.Name)
		r.list = nil
	}
	if ran && w.opts.Finished != nil {
		w.opts.Finished(i, r)
	}
}

// plan orders round r's objects and hands each resource and namespace with enough
// objects a LIST (kube.Lists): the objects of one list are sent together, where the
// first of them was, so that the objects holding the lists' window are always the
// next to be sent.
func (b *Batch) plan(r int, lists *kube.Lists) []item {
	type group struct {
		key     kube.ListKey
		members []item
	}
	var order []item
	byKey := map[kube.ListKey]*group{}
	var groups []*group // in the order their first object comes
	for k := range b.rounds[r] {
		w := &b.rounds[r][k]
		for i := range w.results {
			res := &w.results[i]
			if res.Err != nil || (w.skip != nil && w.skip(i)) {
				continue
			}
			it := item{w, i}
			if lists == nil || res.Same || res.pendingCRD != nil || res.Object.Name() == "" {
				order = append(order, it)
				continue
			}
			mapping, err := b.c.Mapper.RESTMapping(res.ID.GroupKind(), res.ID.Version)
			if err != nil {
				order = append(order, it)
				continue
			}
			key := kube.ListKey{GVR: mapping.Resource}
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				key.Namespace = res.ID.Namespace
			}
			g := byKey[key]
			if g == nil {
				g = &group{key: key}
				byKey[key] = g
				groups = append(groups, g)
				order = append(order, item{}) // the group's place
			}
			g.members = append(g.members, it)
		}
	}
	out := make([]item, 0, len(order))
	next := 0
	for _, it := range order {
		if it.w != nil {
			out = append(out, it)
			continue
		}
		g := groups[next]
		next++
		out = append(out, g.members...)
		if l := lists.Add(g.key, len(g.members)); l != nil {
			for _, m := range g.members {
				m.w.results[m.i].list = l
			}
		}
	}
	return out
}
