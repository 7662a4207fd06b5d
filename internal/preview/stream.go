package preview

import (
	"context"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/report"
)

// stream sends the planned objects and, with a report builder, builds each object's
// report entry as soon as its preview is done, then drops the live object and the
// prediction: a run of 10,000 objects holds their entries (YAML and diffs), not
// 20,000 decoded objects until the end.
//
// An entry is scrubbed of the values known when it is built, so each cluster's
// objects are sent in two rounds: first Secrets and masked objects (whose values the
// scrubber must know), then the rest. Entries are built once every cluster has sent
// its first round and told the builder its values and names (arrive); results that
// return before then wait in a queue.
type stream struct {
	deps Deps
	// b is nil without streaming: everything is sent in the first round and kept.
	b *report.Builder

	mu          sync.Mutex
	done, total int
	// waiting counts the clusters yet to arrive; open is set once none is.
	waiting int
	open    bool
	// arrived are the targets whose first round is done; queue the objects of the
	// second round that returned before the stream opened.
	arrived []*Target
	queue   []queued
}

// queued is an object whose entry waits for the stream to open.
type queued struct {
	t *Target
	i int
}

func newStream(deps Deps, clusters int) *stream {
	return &stream{deps: deps, b: deps.Report, waiting: clusters}
}

// name tells the builder every target's name, which the report shows anyway, those
// skipped or not reached included, before any entry is built.
func (s *stream) name(targets []*Target) {
	if s.b == nil {
		return
	}
	for _, t := range targets {
		s.b.Prepare(report.TargetInput{Name: t.Name})
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

// prepare tells the builder the targets' names and the values they hold once their
// first round is done: rendered Secrets, what pruning deletes, the base's
// predictions, the live Secrets and masked objects.
func (s *stream) prepare(targets []*Target) {
	if s.b == nil {
		return
	}
	for _, t := range targets {
		s.b.Prepare(t.input())
	}
}

// arrive records that a cluster's first round is done and prepared (a cluster that
// failed arrives with no targets). The last to arrive opens the stream: it builds
// the first rounds' entries and those queued.
func (s *stream) arrive(targets ...*Target) {
	s.mu.Lock()
	s.arrived = append(s.arrived, targets...)
	if s.waiting--; s.waiting > 0 || s.b == nil {
		s.mu.Unlock()
		return
	}
	s.open = true
	todo := s.queue
	s.queue = nil
	for _, t := range s.arrived {
		for i := range t.Results {
			// Sensitive first: the second round writes the other objects' flags.
			if s.b.Sensitive(t.Results[i].ID, t.Rules) && t.previewed != nil && t.previewed[i] {
				todo = append(todo, queued{t, i})
			}
		}
	}
	s.mu.Unlock()
	g := &errgroup.Group{}
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, q := range todo {
		g.Go(func() error { s.build(q.t, q.i); return nil })
	}
	_ = g.Wait()
}

// sensitive names, by index, what the first round does not send: another shard's
// objects and, when streaming, those whose values need not be known first.
func (s *stream) sensitive(t *Target) func(int) bool {
	return func(i int) bool {
		return !t.owns(i) || (s.b != nil && !s.b.Sensitive(t.Results[i].ID, t.Rules))
	}
}

// rest names what the second round does not send: what the first sent.
func (s *stream) rest(t *Target) func(int) bool {
	return func(i int) bool {
		return !t.owns(i) || s.b == nil || s.b.Sensitive(t.Results[i].ID, t.Rules)
	}
}

// send previews the target's planned objects that skip does not name and, when
// build is set and streaming, builds their entries as they return.
func (s *stream) send(ctx context.Context, t *Target, opts dryrun.Options, skip func(int) bool, build bool) {
	if t.previewed == nil {
		t.previewed = make([]bool, len(t.Results))
		t.built = make([]report.Built, len(t.Results))
	}
	opts.Skip = skip
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
		t.Rules.Trim(r)
		t.addShared(i)
		t.previewed[i] = true
		if !build || s.b == nil {
			return
		}
		s.mu.Lock()
		if !s.open {
			s.queue = append(s.queue, queued{t, i})
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.build(t, i)
	}
	dryrun.Send(ctx, t.conn.Clients, t.Results, opts)
}

// build builds the entry of the target's i-th object and drops what it was built
// from. An object whose entry cannot be built is kept whole: report.Build says why.
func (s *stream) build(t *Target, i int) {
	r := &t.Results[i]
	ti := report.TargetInput{Name: t.Name, Rules: t.Rules}
	var base *dryrun.Result
	if t.BasePredictions != nil {
		base = t.BasePredictions[i]
		ti.Split = []report.Split{{Head: *r, Base: base}}
	} else {
		ti.Results = []dryrun.Result{*r}
	}
	built, err := s.b.Entries(ti)
	if err != nil {
		return
	}
	t.built[i] = built
	r.Live, r.Merged = nil, nil
	if base != nil {
		base.Live, base.Merged = nil, nil
	}
}
