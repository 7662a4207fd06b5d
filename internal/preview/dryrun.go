package preview

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/helm"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/prune"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
)

// previewAll renders every target and previews each cluster's targets as soon as
// they are rendered, while other clusters' targets still render. For each cluster,
// with what its targets create (namespaces, CRDs) known to all of them:
//
//  1. every object is planned (its identity resolved), so that objects two targets
//     share, what pruning deletes and the names of the run are known;
//  2. pruning and Helm's deletions are read, and the base's predictions of what the
//     pull request changes (split);
//  3. Secrets and masked objects are previewed, and the sink told every value
//     (the cluster arrives at the run's secretsFirst gate);
//  4. the rest is previewed, each object's result handed to the sink as soon as its
//     dry run returns and its objects dropped then (with deps.Sink; without, the
//     results are kept whole for the report). Results are taken once every cluster
//     has passed step 3 (the gate is open), since any Secret of the run is scrubbed
//     from every entry; what returns before waits (a bounded queue: maxQueued).
//
// Steps 3 and 4 share one pool of --concurrency workers per cluster (dryrun.Batch):
// step 4's first objects go out as soon as step 3's last ones have, so the cluster
// never waits for the slowest of step 3, nor one target for another's.
//
// A run sharded by object renders everything first: which objects a shard owns is
// counted across all targets. One sharded by cluster previews its clusters' targets
// alone, and renders the others' without a cluster, so that the sink knows their
// names and Secrets as an unsharded run's would (tellOthers).
func (r *runner) previewAll(ctx context.Context, p *Preview) error {
	rendered := r.startRenders(ctx, p)
	if r.opts.Shard.Sharded() && !r.opts.Shard.ByCluster {
		rendered.Wait()
	}
	r.number(p)
	s := newStream(r.deps, len(p.groups))
	errs := make([]error, len(p.groups))
	var wg sync.WaitGroup
	wg.Go(func() { r.tellOthers(p, s) })
	for i, g := range p.groups {
		wg.Go(func() {
			rendered.waitFor(g)
			errs[i] = r.previewCluster(ctx, g, s)
		})
	}
	wg.Wait()
	rendered.Wait()
	return errors.Join(errs...)
}

// tellOthers arrives at the gate for what no cluster of this runner previews: every
// target's name, which the report shows anyway, those skipped or not reached
// included, and, sharded by cluster, the targets of the clusters another shard
// previews, as they render without a cluster (Helm's default capabilities): their
// objects' names are the run's, and their Secrets' values are scrubbed from this
// shard's report as from the whole run's.
func (r *runner) tellOthers(p *Preview, s *stream) {
	if s.sink == nil {
		return
	}
	known := make([]entry.Known, 0, len(p.Targets))
	for _, t := range p.Targets {
		known = append(known, entry.Known{Target: t.Name})
	}
	defer func() { s.arrive(known, nil) }()
	if !r.opts.Shard.ByCluster {
		return
	}
	var others []*Target
	for _, t := range p.Targets {
		if !t.ownsTarget && t.Skipped == "" && t.Refused == "" && r.head.CheckPaths([]string{t.Spec.Path}) == nil {
			others = append(others, t)
		}
	}
	elsewhere := make([]entry.Known, len(others))
	var wg sync.WaitGroup
	for i, t := range others {
		wg.Go(func() { // side by side: the renderer batches them
			elsewhere[i] = entry.Known{Target: t.Name, Rules: t.Rules}
			res, err := r.renderIn(r.head, t, nil)
			if err != nil {
				return
			}
			for _, o := range res.Objects {
				elsewhere[i].Results = append(elsewhere[i].Results, dryrun.Result{ID: o.ID(), Object: o})
			}
		})
	}
	wg.Wait()
	known = append(known, elsewhere...)
}

// number gives each target its share of a sharded run: the number of its first
// object among all targets' objects, and whether it owns its target-wide work.
func (r *runner) number(p *Preview) {
	if r.opts.Shard.ByCluster {
		return // by cluster (connect)
	}
	first := 0
	for i, t := range p.Targets {
		t.shard, t.first, t.ownsTarget = r.opts.Shard, first, r.opts.Shard.Owns(i)
		if r.opts.Shard.Sharded() && t.Rendered != nil { // renders are done only when sharded
			first += len(t.Rendered.Objects)
		}
	}
}

// previewCluster previews one cluster's rendered targets (steps 1 to 4 above).
func (r *runner) previewCluster(ctx context.Context, g *clusterGroup, s *stream) (err error) {
	arrived := false
	defer func() {
		if !arrived {
			s.arrive(nil, nil)
		}
	}()
	if g.cluster == nil {
		return nil
	}
	if err := r.deps.Clusters.ready(ctx, r, g); err != nil {
		return err
	}
	var objs []render.Object
	var targets []*Target
	for _, t := range g.targets {
		if t.Rendered != nil {
			objs = append(objs, t.Rendered.Objects...)
			targets = append(targets, t)
		}
	}
	pending := dryrun.PendingFrom(objs)
	for _, t := range targets {
		t.Results = dryrun.Plan(t.conn.Clients, t.Rendered.Objects, r.planOptions(t, pending))
		r.left.Add(int64(t.markSame()))
		baseNotLoaded(t)
	}
	warnSharedObjects(g)
	for _, t := range targets {
		r.findDeletes(ctx, t)
		r.leftBehind(ctx, t)
		if r.base != nil && r.opts.SplitDrift && !r.deps.Clusters.Ephemeral() {
			r.splitDrift(ctx, t)
		}
		s.count(t)
	}
	if g.cluster.ready != nil {
		<-g.cluster.ready
	}
	// One pool for the cluster, whatever target an object belongs to: the first
	// round's objects are handed out first, the second's right after.
	b := dryrun.NewBatch(g.cluster.Clients, r.opts.Concurrency)
	for _, t := range targets {
		b.Add(0, t.Results, s.options(t, r.planOptions(t, pending), s.sensitive(t), false))
	}
	for _, t := range targets {
		b.Add(1, t.Results, s.options(t, r.planOptions(t, pending), s.rest(t), true))
	}
	b.Send(ctx, func(round int) {
		if round == 0 {
			arrived = true
			s.arrive(s.sent(targets))
		}
	})
	for _, t := range targets {
		t.addShared(-1)
	}
	return nil
}

// baseNotLoaded warns on each object of t whose version in the base the ephemeral
// server refused: it is previewed against a server without it (an addition where
// the cluster may hold it).
func baseNotLoaded(t *Target) {
	for i := range t.Results {
		res := &t.Results[i]
		why, ok := t.conn.unloaded[res.ID.Key()]
		if !ok || res.Err != nil {
			continue
		}
		res.Warnings = append(res.Warnings, dryrun.Message{Reason: reason.BaseNotLoaded,
			Message: "the ephemeral server refused its version in the base (" + why + "), so it is previewed against a server without it: what the change does to it in the cluster may differ"})
	}
}

// planOptions are how a target's objects are planned and previewed on its cluster.
func (r *runner) planOptions(t *Target, pending *dryrun.Pending) dryrun.Options {
	opts := t.dryRunOptions(r.opts, r.deps.Appliers)
	opts.Absent, opts.Pending = t.conn.absent, pending
	opts.Warnf = r.deps.Warnf
	return opts
}

// findDeletes reads what applying the target deletes: the objects its Helm release
// drops and, with pruning, its inventories' objects it no longer renders. Only the
// planned identities are needed.
func (r *runner) findDeletes(ctx context.Context, t *Target) {
	if !t.ownsTarget {
		return
	}
	if ctx.Err() != nil {
		if r.opts.Prune || t.helm != nil {
			t.deletesCut = "what applying it deletes was not read: the run ended first (" + endedBy(ctx) + ")"
		}
		return
	}
	opts := t.dryRunOptions(r.opts, r.deps.Appliers)
	if t.helm != nil && len(t.Rendered.Failures) == 0 {
		ids := make([]object.ID, 0, len(t.Results))
		for _, res := range t.Results {
			ids = append(ids, res.ID)
		}
		t.helmDeletes = dryrun.Deletes(ctx, t.conn.Clients, t.helm.Dropped(ids), t.helm.Inventory(), t.helm.Source(), helm.Keeps, opts)
	}
	if r.opts.Prune {
		pr := prune.Find(ctx, t.conn.Clients, t.Rendered, t.Results, prune.Options{
			Namespace: t.namespaceIn(t.conn), RequestTimeout: t.conn.RequestTimeout, ApplySet: t.ApplySet, Controller: t.controller()})
		t.Pruned = &pr
	}
}

// leftBehind notes, on a pull request, the objects the base renders for the target
// that the head no longer renders and that applying it does not delete: its applier
// keeps no record of what it applied (kubectl apply, without an ApplySet or an
// inventory listing them), so they stay in the cluster. A target whose render failed
// on either side says nothing: a missing object there is not a removed one.
func (r *runner) leftBehind(ctx context.Context, t *Target) {
	tr := t.Applier.Traits()
	if r.base == nil || t.New || !t.ownsTarget || ctx.Err() != nil || t.Rendered == nil || len(t.Rendered.Failures) > 0 ||
		tr.Record != applier.NoRecord || tr.UpgradesRelease || t.ApplySet != "" || r.base.CheckPaths([]string{t.basePath(true)}) != nil {
		return
	}
	base, err := r.renderIn(r.base, t, t.conn)
	if err != nil || len(base.Failures) > 0 {
		return
	}
	type named struct{ group, kind, name string }
	nameOf := func(id object.ID) named { return named{id.Group, id.Kind, id.Name} }
	ns := t.namespaceIn(t.conn)
	inHead := map[object.Key]bool{}
	for _, o := range t.Rendered.Objects {
		inHead[defaulted(o.ID(), ns)] = true
	}
	handled := map[named]bool{}
	if t.Pruned != nil {
		for _, d := range t.Pruned.Deletes {
			handled[nameOf(d.ID)] = true
		}
		for _, k := range t.Pruned.Kept {
			handled[nameOf(k.ID)] = true
		}
	}
	var left []string
	for _, o := range base.Objects {
		if id := o.ID(); !inHead[defaulted(id, ns)] && !handled[nameOf(id)] {
			left = append(left, report.Object{ID: report.ID(id)}.Title())
		}
	}
	if len(left) == 0 {
		return
	}
	sort.Strings(left)
	t.notes = append(t.notes, fmt.Sprintf("%s no longer rendered by the change, and %s does not delete what it no longer applies: %s in the cluster (delete by hand, or let an ApplySet or inventory prune): %s",
		report.Plural(len(left), "object is", "objects are"), t.Applier.Name(), map[bool]string{true: "it stays", false: "they stay"}[len(left) == 1], strings.Join(left, ", ")))
}

// defaulted is an object's key with the target's namespace for one that names none.
func defaulted(id object.ID, ns string) object.Key {
	k := id.Key()
	if k.Namespace == "" {
		k.Namespace = ns
	}
	return k
}

// warnSharedObjects warns about an object that two targets deploy to the same
// cluster: whichever applies last wins, and each undoes the other. The warning of an
// object to send follows what its preview warns (Target.addShared).
func warnSharedObjects(g *clusterGroup) {
	owners := map[object.Key][]string{}
	for _, t := range g.targets {
		for _, r := range t.Results {
			if r.Err == nil || r.Err.Reason != reason.Duplicate {
				owners[r.ID.Key()] = append(owners[r.ID.Key()], t.Name)
			}
		}
	}
	for _, t := range g.targets {
		for i := range t.Results {
			r := &t.Results[i]
			names := owners[r.ID.Key()]
			if len(names) < 2 {
				continue
			}
			var others []string
			for _, n := range names {
				if n != t.Name {
					others = append(others, n)
				}
			}
			w := dryrun.Message{Reason: reason.Duplicate, Message: fmt.Sprintf(
				"target %s also deploys this object to the same cluster: whichever applies last wins; keep it in one target",
				someOf(others))}
			if r.Err != nil { // never sent
				r.Warnings = append(r.Warnings, w)
				continue
			}
			if t.shared == nil {
				t.shared = make([]*dryrun.Message, len(t.Results))
			}
			t.shared[i] = &w
		}
	}
}

// addShared adds the i-th object's shared-object warning, once its preview is done;
// i < 0 adds those of the objects whose preview never ran (the run ended first).
func (t *Target) addShared(i int) {
	if i >= 0 {
		if i < len(t.shared) && t.shared[i] != nil {
			t.Results[i].Warnings = append(t.Results[i].Warnings, *t.shared[i])
			t.shared[i] = nil
		}
		return
	}
	for j := range t.shared {
		t.addShared(j)
	}
}

// namedAtMost is how many other targets a warning names; the rest are counted, so a
// warning stays short however many targets share an object.
const namedAtMost = 3

// someOf names the first namedAtMost of names, and counts the others.
func someOf(names []string) string {
	if len(names) <= namedAtMost {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:namedAtMost], ", "), len(names)-namedAtMost)
}
