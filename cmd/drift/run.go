package main

import (
	"context"
	"fmt"
	"path"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/prune"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/source"
)

// runTarget is a target as it goes through the run.
type runTarget struct {
	target
	// conn is the cluster the target is diffed on.
	conn     *cluster
	renderer string
	rendered *render.Result
	// renderErr is set when the target could not be rendered at all.
	renderErr error
	// connErr is set when the target's cluster could not be reached.
	connErr error
	results []dryrun.Result
	pruned  *prune.Result
	// baseResults are the base's predictions, by index of results, when drift is split
	// from the pull request's changes; splitNote says why it could not be.
	baseResults []*dryrun.Result
	splitNote   string
	// helm is the deployed revision of the release the helm applier upgrades (nil:
	// an install, or another applier); helmDeletes what the upgrade deletes.
	helm        *dryrun.HelmRelease
	helmDeletes []dryrun.Result
}

// dryRunOptions are how the target's objects are previewed: as its applier applies
// them, on its cluster.
func (t *runTarget) dryRunOptions(o *diffOptions) dryrun.Options {
	profile, _ := dryrun.ProfileFor(t.applier) // checked when the target was planned
	return dryrun.Options{
		Profile:          profile,
		Owner:            t.owner(t.conn),
		Helm:             t.helm,
		FieldManager:     t.fieldManager,
		ForceConflicts:   o.ForceConflicts,
		Namespace:        t.namespaceIn(t.conn),
		Concurrency:      o.Concurrency,
		RequestTimeout:   t.conn.requestTimeout,
		DryRunAggregated: t.dryRunAggregated,
	}
}

// owner is what the target's applier knows its objects by.
func (t *runTarget) owner(cl *cluster) dryrun.Owner {
	switch t.applier {
	case "flux":
		f := config.FluxTarget{}
		if t.flux != nil {
			f = *t.flux
		}
		return dryrun.Owner{Name: firstOf(f.Name, t.name), Namespace: firstOf(f.Namespace, "flux-system")}
	case "argocd", "argocd-server-side":
		a := config.ArgoCDTarget{}
		if t.argocd != nil {
			a = *t.argocd
		}
		return dryrun.Owner{Name: firstOf(a.Application, t.name), Namespace: a.Namespace,
			Tracking: firstOf(a.Tracking, "annotation"), InstanceLabel: firstOf(a.InstanceLabel, "app.kubernetes.io/instance")}
	case "helm":
		spec := t.renderSpec(cl)
		return dryrun.Owner{Name: spec.Helm.ReleaseName, Namespace: spec.Helm.ReleaseNamespace}
	}
	return dryrun.Owner{}
}

// clusterGroup is the targets that deploy to one cluster.
type clusterGroup struct {
	key     clusterKey
	cluster *cluster
	targets []*runTarget
	// others are the skipped targets that deploy to the same cluster.
	others []*runTarget
}

type runState struct {
	all    []*runTarget
	groups []*clusterGroup
}

func (r *runState) stop() {
	for _, g := range r.groups {
		if g.cluster != nil && g.cluster.stop != nil {
			g.cluster.stop()
		}
	}
}

// snapshotKey identifies a snapshot in the render cache: its commit, "" for the work
// tree (a render worker opens the snapshot again from it).
func snapshotKey(s *source.Snapshot) string { return s.Commit }

// namespaceIn is the target's default namespace on its cluster.
func (t *runTarget) namespaceIn(cl *cluster) string {
	if t.namespace != "" {
		return t.namespace
	}
	return cl.namespace
}

// renderSpec completes the target's render spec with what its cluster says: the Helm
// release namespace and the capabilities.
func (t *runTarget) renderSpec(cl *cluster) render.Spec {
	spec := t.spec
	renderer := spec.Renderer
	if renderer == "" {
		renderer = t.renderer
	}
	if renderer != render.RendererHelm {
		spec.Helm = render.HelmOptions{}
		return spec
	}
	if spec.Helm.ReleaseNamespace == "" {
		spec.Helm.ReleaseNamespace = t.namespaceIn(cl)
	}
	if v, apis, err := cl.capabilities(); err == nil {
		spec.Helm.KubeVersion, spec.Helm.APIVersions = v, apis
	}
	if t.applier == "helm" {
		// As helm upgrade renders: the next revision, lookup reading the cluster.
		spec.Helm.Lookup = cl.lookupKey
		if t.helm != nil {
			spec.Helm.Revision = t.helm.NextRevision
		}
	}
	return spec
}

// connect groups the targets to diff by cluster and connects to each cluster (or
// starts an ephemeral server, loaded with the base).
func (o *diffOptions) connect(ctx context.Context, targets []target, head, base *source.Snapshot, cache *render.Cache) (*runState, error) {
	run := &runState{}
	byKey := map[clusterKey]*clusterGroup{}
	for _, t := range targets {
		rt := &runTarget{target: t, renderer: t.spec.Renderer}
		if rt.renderer == "" && t.skipped == "" {
			rt.renderer = render.Detect(head.FS, t.spec.Path)
		}
		run.all = append(run.all, rt)
		if t.skipped != "" || t.refused != "" {
			continue
		}
		g := byKey[t.cluster]
		if g == nil {
			g = &clusterGroup{key: t.cluster}
			byKey[t.cluster] = g
			run.groups = append(run.groups, g)
		}
		g.targets = append(g.targets, rt)
	}
	for _, rt := range run.all {
		if g := byKey[rt.cluster]; g != nil && rt.skipped != "" {
			g.others = append(g.others, rt)
		}
	}
	if o.Cluster == ephemeralCluster {
		return run, o.startEphemerals(ctx, run, head, base, cache)
	}
	for _, g := range run.groups {
		var err error
		flags := flagsFor(o.kube, g.key)
		if o.Cluster != "" {
			flags.ClusterName = &o.Cluster
		}
		if g.cluster, err = newCluster(ctx, flags, o.Concurrency, o.scrub.AddCredential); err != nil {
			if len(run.groups) == 1 {
				return run, err
			}
			// One unreachable cluster does not hide the others: its targets are errors.
			for _, t := range g.targets {
				t.connErr = fmt.Errorf("%s: %w", g.key, err)
			}
			continue
		}
		for _, t := range g.targets {
			t.conn = g.cluster
		}
	}
	return run, nil
}

// renderAll renders every target to diff, in parallel and through the cache.
func (run *runState) renderAll(head *source.Snapshot, cache *render.Cache) {
	g := &errgroup.Group{}
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, t := range run.all {
		if t.skipped != "" || t.conn == nil {
			continue
		}
		g.Go(func() error {
			if err := head.CheckPaths([]string{t.spec.Path}); err != nil {
				t.renderErr = err
				return nil
			}
			t.rendered, t.renderErr = cache.Render(snapshotKey(head), head.FS, t.renderSpec(t.conn))
			return nil
		})
	}
	_ = g.Wait()
}

// dryRun previews every rendered target on its cluster, one target after another.
func (o *diffOptions) dryRun(ctx context.Context, run *runState) {
	total := 0
	for _, t := range run.all {
		if t.rendered != nil {
			total += len(t.rendered.Objects)
		}
	}
	progress := newProgress(o.streams.ErrOut, "previewing")
	var mu sync.Mutex
	offset := 0
	// What the change creates on each cluster (namespaces, CRDs), whichever target
	// renders it.
	pending := map[*cluster]*dryrun.Pending{}
	for _, g := range run.groups {
		var objs []render.Object
		for _, t := range g.targets {
			if t.rendered != nil {
				objs = append(objs, t.rendered.Objects...)
			}
		}
		if g.cluster != nil {
			pending[g.cluster] = dryrun.PendingFrom(objs)
		}
	}
	for _, t := range run.all {
		if t.rendered == nil {
			continue
		}
		base := offset
		opts := t.dryRunOptions(o)
		opts.Progress = func(done, _ int) {
			mu.Lock()
			defer mu.Unlock()
			progress.update(base+done, total)
		}
		opts.Absent, opts.Pending = t.conn.absent, pending[t.conn]
		t.results = dryrun.Run(ctx, t.conn.clients, t.rendered.Objects, opts)
		if t.helm != nil && len(t.rendered.Failures) == 0 && ctx.Err() == nil {
			t.helmDeletes = dryrun.HelmDeletes(ctx, t.conn.clients, t.helm, t.results, opts)
		}
		offset += len(t.rendered.Objects)
		if o.Prune && ctx.Err() == nil {
			pr := prune.Find(ctx, t.conn.clients, t.rendered, t.results, prune.Options{
				Namespace: t.namespaceIn(t.conn), RequestTimeout: t.conn.requestTimeout, ApplySet: t.applySet})
			t.pruned = &pr
		}
	}
	progress.done()
	warnSharedObjects(run)
}

// warnSharedObjects warns about an object that two targets deploy to the same
// cluster: whichever applies last wins, and each undoes the other.
func warnSharedObjects(run *runState) {
	for _, g := range run.groups {
		owners := map[object.Key][]string{}
		for _, t := range g.targets {
			for _, r := range t.results {
				if r.Err == nil || r.Err.Reason != dryrun.ReasonDuplicate {
					owners[r.ID.Key()] = append(owners[r.ID.Key()], t.name)
				}
			}
		}
		for _, t := range g.targets {
			for i := range t.results {
				r := &t.results[i]
				names := owners[r.ID.Key()]
				if len(names) < 2 {
					continue
				}
				var others []string
				for _, n := range names {
					if n != t.name {
						others = append(others, n)
					}
				}
				r.Warnings = append(r.Warnings, dryrun.Message{Reason: dryrun.ReasonDuplicate, Message: fmt.Sprintf(
					"target %s also deploys this object to the same cluster: whichever applies last wins; keep it in one target",
					strings.Join(others, ", "))})
			}
		}
	}
}

// input is the target's part of the report.
func (t *runTarget) input() report.TargetInput {
	in := report.TargetInput{Name: t.name, Path: displayRepoPath(t.spec.Path), Renderer: t.renderer,
		Context: t.cluster.context, Applier: t.applier, Skipped: t.skipped, Results: t.results, Rules: t.rules}
	if t.baseResults != nil {
		in.Split = true
		in.Results, in.Drift = t.splitResults()
		in.AgainstLive = t.againstLive()
	}
	if t.splitNote != "" {
		in.Notes = append(in.Notes, t.splitNote)
	}
	if t.refused != "" {
		in.Failures = append(in.Failures, render.Failure{Source: config.FileName, Reason: render.ReasonRefused, Message: "not previewed: " + t.refused})
	}
	if t.connErr != nil {
		in.Failures = append(in.Failures, render.Failure{Source: displayRepoPath(t.spec.Path), Reason: dryrun.ReasonUnavailable,
			Message: "not previewed: " + t.connErr.Error()})
	}
	if t.renderErr != nil {
		in.Failures = append(in.Failures, render.Failure{Source: displayRepoPath(t.spec.Path), Reason: render.ReasonInvalid, Message: t.renderErr.Error()})
	}
	if t.rendered != nil {
		in.Failures = append(in.Failures, t.rendered.Failures...)
		in.Notes = append(in.Notes, t.rendered.Notes...)
	}
	if len(t.helmDeletes) > 0 {
		in.Results = append(append([]dryrun.Result{}, in.Results...), t.helmDeletes...)
	}
	if t.pruned != nil {
		in.Results = append(append([]dryrun.Result{}, in.Results...), t.pruned.Deletes...)
		in.Failures = append(in.Failures, t.pruned.Failures...)
		in.Notes = append(in.Notes, t.pruned.Notes...)
		for _, k := range t.pruned.Kept {
			in.Kept = append(in.Kept, report.KeptInput{ID: k.ID, Inventory: k.Inventory, Reason: k.Reason})
		}
	}
	return in
}

func displayRepoPath(p string) string {
	if p == "" {
		return "."
	}
	return path.Clean(p)
}

// startEphemerals starts one ephemeral server per cluster, all at once, and loads each
// with its targets' base.
func (o *diffOptions) startEphemerals(ctx context.Context, run *runState, head, base *source.Snapshot, cache *render.Cache) error {
	g := &errgroup.Group{}
	for _, grp := range run.groups {
		g.Go(func() error {
			cl, err := o.startEphemeral(ctx)
			if err != nil {
				return err
			}
			grp.cluster = cl
			for _, t := range grp.targets {
				t.conn = cl
			}
			return o.seedBase(ctx, cl, grp.targets, grp.others, head, base, cache)
		})
	}
	return g.Wait()
}
