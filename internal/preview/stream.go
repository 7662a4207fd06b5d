package preview

import (
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
)

// stream sends the planned objects and, with a sink, hands each object's result to
// it as soon as its preview is done, then drops the live object and the prediction.
//
// The sink may need to know values before it takes anything (Sink.Sensitive), so
// each cluster's objects are sent in two rounds: first Secrets and masked objects,
// then the rest. Results are taken once every cluster has sent its first round and
// told the sink its values and names (arrive); results that return before then wait
// in a queue.
type stream struct {
	deps Deps
	// sink is nil without streaming: everything is sent in the first round and kept.
	sink Sink

	mu          sync.Mutex
	done, total int
	// waiting counts the clusters yet to arrive; open is set once none is.
	waiting int
	open    bool
	// arrived are the targets whose first round is done; queue the objects of the
	// second round that returned before the stream opened.
	arrived []*Target
	queue   []queued
	// opened is broadcast when the stream opens (on mu).
	opened *sync.Cond
}

// queued is an object whose result waits for the stream to open.
type queued struct {
	t *Target
	i int
}

func newStream(deps Deps, clusters int) *stream {
	s := &stream{deps: deps, sink: deps.Sink, waiting: clusters}
	s.opened = sync.NewCond(&s.mu)
	return s
}

// name tells the sink every target's name, which the report shows anyway, those
// skipped or not reached included, before any result is taken.
func (s *stream) name(targets []*Target) {
	if s.sink == nil {
		return
	}
	for _, t := range targets {
		s.sink.Prepare(entry.TargetInput{Name: t.Name})
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

// prepare tells the sink the targets' names and the values they hold once their
// first round is done: rendered Secrets, what pruning deletes, the base's
// predictions, the live Secrets and masked objects. The second round's objects,
// whose previews may be running, are told by their identity and rendered object
// only: the sink reads no other value of theirs (Sink.Sensitive).
func (s *stream) prepare(targets []*Target) {
	if s.sink == nil {
		return
	}
	for _, t := range targets {
		s.sink.Prepare(t.inputOf(func(i int) bool { return t.owns(i) && !s.sink.Sensitive(t.Results[i].ID, t.Rules) }))
	}
}

// arrive records that a cluster's first round is done and prepared (a cluster that
// failed arrives with no targets). The last to arrive opens the stream: it hands
// the sink the first rounds' results and those queued.
func (s *stream) arrive(targets ...*Target) {
	s.mu.Lock()
	s.arrived = append(s.arrived, targets...)
	if s.waiting--; s.waiting > 0 || s.sink == nil {
		s.mu.Unlock()
		return
	}
	s.open = true
	s.opened.Broadcast()
	if s.deps.Opened != nil {
		s.deps.Opened()
	}
	todo := s.queue
	s.queue = nil
	for _, t := range s.arrived {
		for i := range t.Results {
			// Sensitive first: the second round writes the other objects' flags.
			if s.sink.Sensitive(t.Results[i].ID, t.Rules) && t.previewed != nil && t.previewed[i] {
				todo = append(todo, queued{t, i})
			}
		}
	}
	s.mu.Unlock()
	g := &errgroup.Group{}
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, q := range todo {
		g.Go(func() error { s.take(q.t, q.i); return nil })
	}
	_ = g.Wait()
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
		t.taken = make([]bool, len(t.Results))
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
		if !take || s.sink == nil {
			return
		}
		s.mu.Lock()
		if !s.open {
			s.queue = append(s.queue, queued{t, i})
			// The queue holds whole results: past maxQueued, the worker waits for the
			// stream to open (every cluster's first round is done or failed).
			for !s.open && len(s.queue) >= maxQueued {
				s.opened.Wait()
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.take(t, i)
	}
	return opts
}

// maxQueued bounds the results that wait, whole, for the stream to open.
const maxQueued = 256

// take hands the sink the target's i-th result and, when it took it, drops what the
// result holds. A result the sink does not take is kept whole for the report.
func (s *stream) take(t *Target, i int) {
	r := &t.Results[i]
	in := entry.TargetInput{Name: t.Name, Rules: t.Rules}
	var base *dryrun.Result
	if t.BasePredictions != nil {
		base = t.BasePredictions[i]
		in.Split = []entry.Split{{Head: *r, Base: base}}
	} else {
		in.Results = []dryrun.Result{*r}
	}
	if !s.sink.Take(in, i) {
		return
	}
	t.taken[i] = true
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
