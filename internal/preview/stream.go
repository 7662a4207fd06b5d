package preview

import (
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
)

// secretsFirst holds back every entry of a run until the sink knows every value it
// scrubs: the names of every target and object, and the values of every Secret and
// masked object the run previews. Each party of the run (each cluster, once its
// first round is sent, and the one that tells the targets no cluster here
// previews) arrives once with what it knows; the last to arrive opens the gate.
// Results handed to the sink before then wait.
//
// arrive is the one place the sink is told anything during a preview.
type secretsFirst struct {
	sink Sink
	// opens is called once the gate opens (Deps.Opened).
	opens func()

	mu sync.Mutex
	// waiting counts the parties yet to arrive; open is set once none is.
	waiting int
	open    bool
	// held are the takes the parties brought, run when the gate opens; queue those
	// handed in before it opened.
	held, queue []func()
	// opened is broadcast when the gate opens (on mu).
	opened *sync.Cond
}

// maxQueued bounds the results that wait, whole, for the gate to open.
const maxQueued = 256

func newSecretsFirst(sink Sink, opens func(), parties int) *secretsFirst {
	g := &secretsFirst{sink: sink, opens: opens, waiting: parties}
	g.opened = sync.NewCond(&g.mu)
	return g
}

// arrive tells the sink what a party knows (a cluster that failed arrives knowing
// nothing) and brings held, the takes of its results that needed the gate open
// (its first round's). The last to arrive opens the gate: it runs every party's
// held takes and those queued, side by side.
func (g *secretsFirst) arrive(known []entry.Known, held []func()) {
	for _, k := range known {
		g.sink.Learn(k)
	}
	g.mu.Lock()
	g.held = append(g.held, held...)
	if g.waiting--; g.waiting > 0 {
		g.mu.Unlock()
		return
	}
	g.open = true
	g.opened.Broadcast()
	if g.opens != nil {
		g.opens()
	}
	todo := append(g.held, g.queue...)
	g.held, g.queue = nil, nil
	g.mu.Unlock()
	w := &errgroup.Group{}
	w.SetLimit(runtime.GOMAXPROCS(0))
	for _, take := range todo {
		w.Go(func() error { take(); return nil })
	}
	_ = w.Wait()
}

// take runs take, which hands a result to the sink, now when the gate is open, else
// once it opens. The queue holds whole results: past maxQueued, the caller (a dry
// run's worker) waits for the gate to open.
func (g *secretsFirst) take(take func()) {
	g.mu.Lock()
	if g.open {
		g.mu.Unlock()
		take()
		return
	}
	g.queue = append(g.queue, take)
	for !g.open && len(g.queue) >= maxQueued {
		g.opened.Wait()
	}
	g.mu.Unlock()
}

// stream sends the planned objects and, with a sink, hands each object's result to
// it as soon as its preview is done, through the run's secretsFirst gate, then keeps
// the entries the sink built in place of the result and drops its objects.
//
// The sink may need to know values before it takes anything (Sink.Sensitive), so
// each cluster's objects are sent in two rounds: first Secrets and masked objects,
// then the rest. A cluster arrives at the gate once its first round is sent.
type stream struct {
	deps Deps
	// sink is nil without streaming: everything is sent in the first round and kept.
	sink Sink
	gate *secretsFirst

	mu          sync.Mutex
	done, total int
}

// newStream is the stream of a run whose targets are previewed on clusters
// clusters, one party each at the gate, beside the party that tells the targets no
// cluster here previews (tellOthers).
func newStream(deps Deps, clusters int) *stream {
	s := &stream{deps: deps, sink: deps.Sink}
	if s.sink != nil {
		s.gate = newSecretsFirst(s.sink, deps.Opened, clusters+1)
	}
	return s
}

// arrive brings what a party knows to the gate, with the takes it holds.
func (s *stream) arrive(known []entry.Known, held []func()) {
	if s.gate != nil {
		s.gate.arrive(known, held)
	}
}

// count adds the target's objects this runner previews to the progress total.
func (s *stream) count(t *Target) {
	n := 0
	for i := range t.Results {
		if t.owns(i) {
			n++
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += n
}

// sent is what a cluster brings to the gate once its targets' first round is sent:
// what the sink must know of them (their names, the values they hold: rendered
// Secrets, what pruning deletes, the base's predictions, the live Secrets and
// masked objects) and the takes of the first round's results. The second round's
// objects, whose previews may be running, are known by their identity and rendered
// object only: the sink reads no other value of theirs (Sink.Sensitive).
func (s *stream) sent(targets []*Target) (known []entry.Known, held []func()) {
	if s.sink == nil {
		return nil, nil
	}
	for _, t := range targets {
		known = append(known, t.known(func(i int) bool { return t.owns(i) && !s.sink.Sensitive(t.Results[i].ID, t.Rules) }))
		for i := range t.Results {
			if s.sink.Sensitive(t.Results[i].ID, t.Rules) && t.previewed != nil && t.previewed[i] {
				held = append(held, func() { s.take(t, i) })
			}
		}
	}
	return known, held
}

// sensitive names, by index, what the first round does not send: another shard's
// objects and, when streaming, those whose values need not be known first.
func (s *stream) sensitive(t *Target) func(int) bool {
	return func(i int) bool {
		return !t.owns(i) || (s.sink != nil && !s.sink.Sensitive(t.Results[i].ID, t.Rules))
	}
}

// rest names what the second round does not send: what the first sent.
func (s *stream) rest(t *Target) func(int) bool {
	return func(i int) bool {
		return !t.owns(i) || s.sink == nil || s.sink.Sensitive(t.Results[i].ID, t.Rules)
	}
}

// options are how the target's planned objects that skip does not name are sent and,
// when take is set and streaming, how their results go to the sink as they return.
func (s *stream) options(t *Target, opts dryrun.Options, skip func(int) bool, take bool) dryrun.Options {
	if t.previewed == nil {
		t.previewed = make([]bool, len(t.Results))
		t.built = make([]*entry.Built, len(t.Results))
	}
	opts.Skip = skip
	if s.sink != nil {
		// The first round (Secrets, masked objects) is sent before the sink knows the
		// values the cache must not store in clear: only Secrets, whose every data
		// value the cache hides, are answered from it then.
		opts.Cache, opts.CacheSecretsOnly = t.conn.results, !take
	}
	opts.Progress = func(int, int) {
		if s.deps.Progress == nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.done++
		s.deps.Progress(s.done, s.total)
	}
	opts.Finished = func(i int, r *dryrun.Result) {
		entry.Trim(t.Rules, r)
		t.addShared(i)
		t.previewed[i] = true
		if take && s.sink != nil {
			s.gate.take(func() { s.take(t, i) })
		}
	}
	return opts
}

// take hands the sink the target's i-th result and, when it took it, keeps the
// entries it built in place of the result and drops what the result holds. A
// result the sink does not take is kept whole for the report.
func (s *stream) take(t *Target, i int) {
	r := &t.Results[i]
	one := entry.One{Target: t.Name, Rules: t.Rules, Head: *r}
	var base *dryrun.Result
	if t.BasePredictions != nil {
		base = t.BasePredictions[i]
		one.Split, one.Base = true, base
	}
	built, ok := s.sink.Take(one)
	if !ok {
		return
	}
	t.built[i] = &built
	// Its objects go: the prediction, the live one, the rendered one (the target's
	// copy of its rendering holds the same, renderIn).
	r.Live, r.Merged = nil, nil
	r.Object.Drop()
	if i < len(t.Rendered.Objects) {
		t.Rendered.Objects[i].Drop()
	}
	if base != nil {
		base.Live, base.Merged = nil, nil
		base.Object.Drop()
	}
}
