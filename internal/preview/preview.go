// Package preview runs a run's targets: it connects to their clusters (or starts
// ephemeral servers loaded with the base), renders them, previews every object as
// its applier applies it, finds what pruning deletes, warns about objects two
// targets share, and tells a pull request's change apart from drift already in the
// cluster. Its result is the report's input.
package preview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/resultcache"
	"github.com/drift-gitops/drift/internal/source"
)

// Deps are what a preview needs from outside it, passed in, as helm's
// action.Configuration is to its actions.
type Deps struct {
	// Clusters gives the run its clusters: Live or Ephemeral.
	Clusters Clusters
	// Cache renders the targets (in render workers, under the run's limits).
	Cache *rendercache.Cache
	// Appliers are the run's appliers: the default one loads an ephemeral server's
	// scaffolding, and each target's warns when another one applies an object.
	Appliers *applier.Registry
	// Progress, when set, is told how many objects of how many were previewed.
	Progress func(done, total int)
	// Warnf reports what the run goes on without.
	Warnf func(format string, args ...any)
	// Secrets is told the objects whose Secret values a warning may quote.
	Secrets func(objs ...*unstructured.Unstructured)
	// Results, when set, is the dry-run cache of a live cluster (nil: none for it),
	// asked once per cluster while its objects are planned; it answers what it holds
	// of the second round and, of the first, Secrets (never masked objects).
	Results func(ctx context.Context, c *kube.Clients) *resultcache.Cluster
	// Opened, when set, is called once the sink knows every value of the run (every
	// cluster's first round is done): the cache may store answers from then on.
	Opened func()
	// Sink, when set, takes each object's result as soon as its preview is done, and
	// the objects are dropped then (Inputs hold the entries it built, Built).
	// Without it, results are kept whole.
	Sink Sink
}

// Sink takes a run's results as their previews finish (entry.Builder builds each
// object's report entries then), so that a run of 10,000 objects holds their
// entries, not 20,000 decoded objects until the end.
//
// A sink may scrub what it takes of values it must know first: each cluster's
// objects are sent in two rounds, first those Sensitive says it must know, then the
// rest, and nothing is taken before every cluster has sent its first round and the
// sink learnt every target's names and values (secretsFirst).
type Sink interface {
	// Learn tells the sink what it must know of a target before it takes any result:
	// every target's name, then each previewed target's names and values once its
	// first round is sent.
	Learn(k entry.Known)
	// Sensitive reports whether the sink must know an object's previewed values
	// before it takes any result.
	Sensitive(id object.ID, rules config.Rules) bool
	// Take takes one object's result and returns the entries it built of it. It
	// reports whether it took it; the preview then keeps the entries in place of the
	// result and drops the result's objects.
	Take(o entry.One) (entry.Built, bool)
}

// Options say how to preview.
type Options struct {
	// Concurrency is the number of objects previewed at once.
	Concurrency int
	// CopySecrets lets a ResourceSet's Secret be filled from the cluster's Secret its
	// copyFrom names, as flux-operator fills it: not on a pull request (which chose
	// the name) unless the runner says so (--lookup-secrets), as for Helm's lookup.
	CopySecrets bool
	// ForceConflicts previews a forced apply.
	ForceConflicts bool
	// Prune reports what applying deletes.
	Prune bool
	// SplitDrift tells a pull request's change apart from drift already in the
	// cluster (a base on a live cluster).
	SplitDrift bool
	// FieldManager is the manager an ephemeral server's scaffolding is loaded with.
	FieldManager string
	// Namespace is an ephemeral server's default namespace ("" for default).
	Namespace string
	// LoadAll loads an ephemeral server with every object of the base and previews
	// every object of the head, those the change leaves as they are included (their
	// YAML is shown, or the server's warnings about them wanted); without it, those
	// are unchanged without a request (dryrun.Result.Same).
	LoadAll bool
	// CRDs are loaded into every ephemeral server beside what the base renders: the
	// clusters have them (drift.yaml's ephemeral.crds, --crds-from-context).
	CRDs []render.Object
	// Shard is this runner's share of the run (the zero Shard: all of it). Every
	// shard renders every target; it previews its share of the objects and, of the
	// targets it owns, what is target-wide (render failures, pruning, notes).
	Shard plan.Shard
}

// Preview is a run's targets after their preview.
type Preview struct {
	Targets []*Target
	groups  []*clusterGroup
	// left counts the objects left as they are (LeftAsIs).
	left *atomic.Int64
}

// Run previews targets (skipped ones are carried along for the report) from head,
// on their clusters; base is the pull request's base, or nil. Stop releases what
// it started; Run releases it itself when it fails. When ctx ends (the run's
// deadline, a signal), Run returns what it finished: each target or object it did
// not finish is a not-checked error.
func Run(ctx context.Context, deps Deps, opts Options, targets []plan.Target, head, base *source.Snapshot) (*Preview, error) {
	if deps.Warnf == nil {
		deps.Warnf = func(string, ...any) {}
	}
	if deps.Secrets == nil {
		deps.Secrets = func(...*unstructured.Unstructured) {}
	}
	if deps.Clusters == nil {
		return nil, fmt.Errorf("no clusters to preview on: set Deps.Clusters")
	}
	r := &runner{deps: deps, opts: opts, head: head, base: base}
	p, err := r.connect(ctx, targets)
	if p != nil {
		p.left = &r.left
	}
	if err == nil {
		r.readHelmReleases(ctx, p)
		err = r.previewAll(ctx, p)
		for _, g := range p.groups {
			g.cluster.wait()
		}
	}
	if ctx.Err() != nil {
		// The run's deadline or a signal: what was finished is reported, and what
		// was not is an error.
		if err != nil {
			r.deps.Warnf("%v", err)
		}
		p.cutShort(ctx, deps.Clusters)
		return p, nil
	}
	if err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// Stop releases the clusters the preview started (ephemeral servers).
func (p *Preview) Stop() {
	if p == nil {
		return
	}
	for _, g := range p.groups {
		if g.cluster != nil && g.cluster.stop != nil {
			g.cluster.stop()
		}
	}
}

// LeftAsIs is how many objects of the head the change leaves as they are, which an
// ephemeral server was neither loaded with nor sent (dryrun.Result.Same).
func (p *Preview) LeftAsIs() int {
	if p == nil || p.left == nil {
		return 0
	}
	return int(p.left.Load())
}

// Inputs are the targets' parts of the report, in the order they were planned.
func (p *Preview) Inputs() []entry.TargetInput {
	out := make([]entry.TargetInput, 0, len(p.Targets))
	for _, t := range p.Targets {
		out = append(out, t.input())
	}
	return out
}

// runner holds what every stage of one Run shares.
type runner struct {
	deps       Deps
	opts       Options
	head, base *source.Snapshot
	// left counts the objects the change leaves as they are, which were neither
	// loaded nor sent (markSame).
	left atomic.Int64
}

// interrupted says what was cut short when ctx ended.
func interrupted(ctx context.Context, what string) error {
	return fmt.Errorf("interrupted while %s: %w", what, context.Cause(ctx))
}

// Digest sums up what the run planned and rendered: the targets and each one's
// objects, in order. Shards of one run agree on it, so that drift report merge can
// refuse shards that rendered different things (a Helm lookup that read a cluster
// in between).
func (p *Preview) Digest() string {
	h := sha256.New()
	for _, t := range p.Targets {
		fmt.Fprintf(h, "target %q %q %q %q %q %q\n", t.Name, t.Spec.Path, t.Spec.Renderer, t.Cluster.Context, t.Applier.Name(), t.Skipped)
		if t.shard.ByCluster {
			continue // each cluster's targets are rendered by one shard alone
		}
		if t.Rendered != nil {
			fmt.Fprintf(h, "failures %d\n", len(t.Rendered.Failures))
		}
		for _, r := range t.Results {
			fmt.Fprintf(h, "object %q %q %q %q %q %q %d\n", r.ID.Group, r.ID.Version, r.ID.Kind, r.ID.Namespace, r.ID.Name, r.Object.Source, r.Object.Doc)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
