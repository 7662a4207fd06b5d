package preview

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/controllercrds"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// Ephemeral is one throwaway API server per cluster of the run, each started by
// Start and loaded, for real, with what its targets' base renders (seedBase); before
// its dry runs it gets the Namespaces and CRDs only the head has
// (seedHeadScaffolding). Seeding is this provider's job; once seeded, the server is
// previewed on as a live cluster is.
type Ephemeral struct {
	// Start starts a throwaway API server; stop releases it. The run takes its
	// connection's clients; the server's default namespace is Options.Namespace,
	// else default.
	Start func(ctx context.Context) (conn *kube.Connection, stop func(), err error)
}

// seeding is what a throwaway server was loaded with, and how.
type seeding struct {
	// absent lists objects the server holds only so others can be previewed.
	absent map[object.Key]bool
	// seeded lists what the server was loaded with; assumed, the targets'
	// namespaces it was given though nothing renders them.
	seeded  map[object.Key]bool
	assumed map[object.Key]bool
	// unloaded says, by object, why the server refused the base's version of it.
	unloaded map[object.Key]string
	// shipped is what the server is given of drift's copies of the controllers'
	// CRDs.
	shipped controllercrds.Serving
	// installedBy says, by namespace, why the server was given a namespace a
	// controller runs in (controllercrds.Serving.Namespaces).
	installedBy map[string]string
	// stop stops the server.
	stop func()
}

// open starts one server per cluster, all at once, and loads each with its
// targets' base. A server starts while what it is loaded with renders (seedBase);
// its default namespace is Options.Namespace, else default.
func (e Ephemeral) open(ctx context.Context, r *runner, p *Preview) error {
	g := &errgroup.Group{}
	for _, grp := range p.groups {
		g.Go(func() error {
			cl := &cluster{Connection: &kube.Connection{Namespace: cmp.Or(r.opts.Namespace, "default"), RequestTimeout: kube.DefaultRequestTimeout},
				seeding: seeding{absent: map[object.Key]bool{}, seeded: map[object.Key]bool{}, assumed: map[object.Key]bool{}, unloaded: map[object.Key]string{}, installedBy: map[string]string{}},
				up:      make(chan struct{})}
			grp.cluster = cl
			for _, t := range grp.targets {
				t.conn = cl
			}
			var startErr error
			go func() {
				defer close(cl.up)
				conn, stop, err := e.Start(ctx)
				if err != nil {
					startErr = err
					return
				}
				// The rest of the connection is the server's own (a throwaway one's
				// namespace and request timeout), read while it starts.
				cl.Clients, cl.stop = conn.Clients, stop
			}()
			started := func() error {
				<-cl.up
				return startErr
			}
			err := r.seedBase(ctx, cl, grp.targets, grp.others, started)
			if err := started(); err != nil {
				return err // the server's stop is set once it started, whatever seedBase said
			}
			return err
		})
	}
	return g.Wait()
}

// ready loads the Namespaces and CRDs only g's rendered head has.
func (Ephemeral) ready(ctx context.Context, r *runner, g *clusterGroup) error {
	return r.seedHeadScaffolding(ctx, g.cluster, g.targets)
}

func (Ephemeral) opening() string { return "while the ephemeral server was started and loaded" }

// Ephemeral: the servers are throwaway ones.
func (Ephemeral) Ephemeral() bool { return true }

// scaffoldOpts load Namespaces and CRDs no target's applier owns, as the default
// applier applies them.
func (r *runner) scaffoldOpts(cl *cluster) dryrun.Options {
	return dryrun.Options{Applier: r.deps.Appliers.Get(applier.Default), FieldManager: r.opts.FieldManager, Namespace: cl.Namespace, Concurrency: r.opts.Concurrency}
}

// seedBase loads into an ephemeral server, for real, every object the base renders
// for the targets the base itself defines: CustomResourceDefinitions and Namespaces
// first. Targets of the same cluster that are not previewed (skipped) still
// contribute their Namespaces and CRDs, which the previewed targets may need; taken
// from the base, or from the head without one. A target the change adds is never
// loaded, even over files the base holds: nothing deploys them before the change.
func (r *runner) seedBase(ctx context.Context, cl *cluster, targets, others []*Target, started func() error) error {
	var scaffolding, rendered []render.Object
	from := r.base
	if from == nil {
		from = r.head
	}
	// All rendered at once: the render workers take them in batches.
	results := make([]*render.Result, len(others))
	var wg sync.WaitGroup
	for i, t := range others {
		if (r.base != nil && t.New) || from.CheckPaths([]string{t.basePath(from == r.base)}) != nil {
			continue
		}
		wg.Go(func() {
			if res, err := r.renderIn(from, t, cl); err == nil {
				results[i] = res
			}
		})
	}
	wg.Wait()
	for _, res := range results {
		if res == nil {
			continue
		}
		rendered = append(rendered, res.Objects...)
		for _, obj := range res.Objects {
			if k := obj.ID().Key(); object.IsScaffolding(obj.ID().GroupKind()) && !cl.seeded[k] {
				scaffolding = append(scaffolding, obj)
				cl.seeded[k] = true
				// Without a base nothing is deployed: a previewed target that renders the
				// same object still sees it as an addition.
				cl.absent[k] = r.base == nil
			}
		}
	}
	var batches []ephemeral.Batch
	if r.base != nil {
		r.renderHeadFirst(ctx, targets)
		bases := r.renderBases(cl, targets)
		r.leftAsIs(cl, targets, bases)
		batches = r.baseBatches(cl, targets, bases)
	}
	for _, b := range batches {
		rendered = append(rendered, b.All...)
	}
	for _, crd := range r.opts.CRDs {
		if k := crd.ID().Key(); !cl.seeded[k] {
			scaffolding = append(scaffolding, crd)
			cl.seeded[k] = true
			cl.absent[k] = false
		}
	}
	shipped, err := r.controllerCRDs(cl, rendered, true) // the base's, or the head's without one
	if err != nil {
		return err
	}
	scaffolding = append(scaffolding, shipped...)
	scaffolding = append(scaffolding, r.targetNamespaces(cl, targets)...)
	// Everything above renders while the server starts.
	if err := started(); err != nil {
		return err
	}
	r.seedReport(ephemeral.Load(ctx, cl.Clients, scaffolding, r.scaffoldOpts(cl), batches, r.deps.Warnf), cl.unloaded)
	if ctx.Err() != nil {
		if r.base == nil {
			return interrupted(ctx, "loading the ephemeral server")
		}
		return interrupted(ctx, "loading the base into the ephemeral server")
	}
	return nil
}

// targetNamespaces are the Namespaces the targets deploy into (a target's
// namespace, a Helm release's) and those the Flux Kustomization or the Argo CD
// Application that applies a target is in (its controller reads it there), that
// neither the base nor another target renders: the cluster has them, or
// the applier could not deploy there, so the ephemeral server gets them too, and each
// such target says so in a note. A target the change adds does not vouch for the
// namespace of what applies it. Called once the base's scaffolding is known; a head
// that renders one of them later reports it as an addition (seedHeadScaffolding).
func (r *runner) targetNamespaces(cl *cluster, targets []*Target) []render.Object {
	var out []render.Object
	for _, t := range targets {
		ns := t.Namespace
		if t.Spec.Helm.ReleaseNamespace != "" && t.Spec.Renderer == render.RendererHelm {
			ns = t.Spec.Helm.ReleaseNamespace
		}
		why := map[string]string{}
		if ns != "" {
			why[ns] = "the target deploys into it"
		}
		if by, at := applierObject(t); at != "" && at != ns && (r.base == nil || !t.New) {
			why[at] = "the " + by + " that applies the target is there"
		}
		for _, ns := range slices.Sorted(maps.Keys(why)) {
			obj := render.Object{Obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, Source: config.FileName}
			k := obj.ID().Key()
			if !cl.seeded[k] {
				out = append(out, obj)
				cl.seeded[k], cl.assumed[k] = true, true
				cl.absent[k] = r.base == nil
			}
			if cl.assumed[k] {
				t.notes = append(t.notes, fmt.Sprintf("namespace %s is created in the ephemeral server: %s and the repository does not render it, so the cluster is taken to have it", ns, why[ns]))
			}
		}
	}
	return out
}

// applierObject is the kind of the Flux Kustomization or Argo CD Application that
// applies t, and its namespace ("": none known, or Argo CD's own, which the ephemeral
// server gets with its CRDs).
func applierObject(t *Target) (kind, ns string) {
	switch {
	case t.Flux != nil:
		return "Kustomization", t.Flux.Namespace
	case t.ArgoCD != nil:
		return "Application", t.ArgoCD.Namespace
	}
	return "", ""
}

// renderHeadFirst renders from the head, side by side, every target whose head
// render does not read the server (all but the helm applier's upgrades and lookups,
// which start from what the base loads), so that what the change touches, and every
// name the head renders, is known before the server is loaded.
func (r *runner) renderHeadFirst(ctx context.Context, targets []*Target) {
	var wg sync.WaitGroup
	for _, t := range targets {
		if !t.Applier.Traits().UpgradesRelease && !t.Lookup {
			t.renderedFirst = true
			wg.Go(func() { r.render(ctx, t) })
		}
	}
	wg.Wait()
}

// renderBases renders, side by side, each target the base defines in the base, as
// the base defines it: nil for a target the change adds (a new Application,
// drift.yaml entry, Kustomization or HelmRelease), whatever files the base holds,
// for one whose files the base does not hold, and for one whose rendering failed
// (each such target says so).
func (r *runner) renderBases(cl *cluster, targets []*Target) map[*Target]*render.Result {
	results := make([]*render.Result, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		if t.New || r.base.CheckPaths([]string{t.basePath(true)}) != nil {
			continue
		}
		wg.Go(func() { results[i], errs[i] = r.renderIn(r.base, t, cl) })
	}
	wg.Wait()
	out := map[*Target]*render.Result{}
	for i, t := range targets {
		switch {
		case errs[i] != nil:
			r.deps.Warnf("target %s cannot be rendered in the base (%s): %v", t.Name, r.base.Describe(), errs[i])
			t.notes = append(t.notes, fmt.Sprintf("its rendering in the base (%s) failed, so the ephemeral server holds nothing of it: every object is previewed as an addition", r.base.Describe()))
		case results[i] != nil:
			out[t] = results[i]
		}
	}
	return out
}

// baseBatches are what each target's base render loads, as its applier leaves it,
// its Namespaces and CRDs first: everything but the objects the change leaves as they
// are (Target.same), which nothing reads. A target the change adds is left out:
// everything it renders is an addition.
func (r *runner) baseBatches(cl *cluster, targets []*Target, bases map[*Target]*render.Result) []ephemeral.Batch {
	var batches []ephemeral.Batch
	for _, t := range targets {
		res := bases[t]
		if res == nil {
			continue
		}
		for _, f := range res.Failures {
			r.deps.Warnf("the base (%s) has a document that cannot be loaded: %s", r.base.Describe(), f.Error())
		}
		if len(res.Failures) > 0 {
			t.notes = append(t.notes, fmt.Sprintf("its rendering in the base (%s) failed in part (%d documents), so the ephemeral server holds only what rendered: an object of the others is previewed as an addition", r.base.Describe(), len(res.Failures)))
		}
		ns := t.namespaceIn(cl)
		same := t.sameKeys(ns)
		b := ephemeral.Batch{All: res.Objects, Namespace: ns, Opts: t.dryRunOptions(r.opts, r.deps.Appliers)}
		if len(same) > 0 {
			b.Left = func(o render.Object) bool { return same[defaulted(o.ID(), ns)] }
		}
		for _, obj := range res.Objects {
			k := obj.ID().Key()
			switch {
			case same[defaulted(obj.ID(), ns)]:
			case !object.IsScaffolding(obj.ID().GroupKind()):
				b.Objects = append(b.Objects, seedable(obj))
			case !cl.seeded[k]:
				b.Scaffolding = append(b.Scaffolding, obj)
			}
			cl.seeded[k] = true
		}
		batches = append(batches, b)
	}
	return batches
}

// controllerCRDs are drift's copies of the GitOps controllers' CRDs (package
// controllercrds) for the kinds objs use that nothing loaded into the server serves:
// the repository's own CRDs, drift.yaml's ephemeral.crds and --crds-from-context's
// come first and win. They are taken to be on the cluster, as the controller that
// applies the repository installs them.
func (r *runner) controllerCRDs(cl *cluster, objs []render.Object, trusted bool) ([]render.Object, error) {
	crds, err := cl.shipped.Add(controllerObjects(objs), trusted, func(name string) bool {
		return cl.seeded[object.Key{Group: object.CRDKind.Group, Kind: object.CRDKind.Kind, Name: name}]
	})
	if err != nil {
		return nil, fmt.Errorf("drift's copy of the controllers' CRDs: %w", err)
	}
	var out []render.Object
	for _, crd := range crds {
		obj := render.Object{Obj: crd, Source: "drift's copy of the controllers' CRDs"}
		k := obj.ID().Key()
		cl.seeded[k], cl.absent[k] = true, false
		out = append(out, obj)
	}
	// The namespace a FluxInstance installs Flux into (flux-operator makes it), and
	// Argo CD's own.
	for ns := range cl.shipped.Namespaces() {
		obj := render.Object{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, Source: "drift's copy of the controllers' CRDs"}
		if k := obj.ID().Key(); !cl.seeded[k] {
			cl.seeded[k], cl.absent[k], cl.installedBy[ns] = true, false, cl.shipped.Namespaces()[ns]
			out = append(out, obj)
		}
	}
	return out, nil
}

// controllerObjects are the objects of objs of a kind drift ships a controller's CRD
// for, decoded; the others are not (an object held as JSON stays so).
func controllerObjects(objs []render.Object) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if crd, _ := controllercrds.For(o.ID().GroupKind()); crd != nil {
			out = append(out, o.Get())
		}
	}
	return out
}

// installNotes say which of the namespaces the objects are in the ephemeral server was
// given because a controller runs there (Namespaces).
func installNotes(cl *cluster, objs []render.Object) []string {
	var notes []string
	for _, o := range objs {
		ns := o.ID().Namespace
		if by := cl.installedBy[ns]; by != "" && !slices.Contains(notes, ns) {
			notes = append(notes, ns)
		}
	}
	for i, ns := range notes {
		notes[i] = fmt.Sprintf("namespace %s is created in the ephemeral server: %s, so the cluster is taken to have it", ns, cl.installedBy[ns])
	}
	return notes
}

// seedHeadScaffolding loads the Namespaces and CRDs only the head has, so that the
// objects in them can be previewed; they are marked absent and reported as additions.
// drift's copies of the controllers' CRDs serve the kinds only the head uses, and
// each target says which of its kinds they serve.
func (r *runner) seedHeadScaffolding(ctx context.Context, cl *cluster, targets []*Target) error {
	var scaffolding, rendered []render.Object
	for _, t := range targets {
		if t.Rendered == nil {
			continue
		}
		rendered = append(rendered, t.Rendered.Objects...)
		for _, obj := range t.Rendered.Objects {
			k := obj.ID().Key()
			switch {
			case object.IsScaffolding(obj.ID().GroupKind()) && !cl.seeded[k]:
				scaffolding = append(scaffolding, obj)
				cl.absent[k], cl.seeded[k] = true, true
			case cl.assumed[k]:
				// A target's namespace drift created, which the head itself adds.
				cl.absent[k] = true
			}
		}
	}
	shipped, err := r.controllerCRDs(cl, rendered, r.base == nil)
	if err != nil {
		return err
	}
	scaffolding = append(scaffolding, shipped...)
	for _, t := range targets {
		if t.Rendered == nil {
			continue
		}
		t.notes = append(t.notes, cl.shipped.Notes(controllerObjects(t.Rendered.Objects))...)
		t.notes = append(t.notes, installNotes(cl, t.Rendered.Objects)...)
	}
	if len(scaffolding) == 0 {
		return nil
	}
	r.seedReport(ephemeral.Seed(ctx, cl.Clients, scaffolding, r.scaffoldOpts(cl)), nil)
	if ctx.Err() != nil {
		return interrupted(ctx, "loading the ephemeral server")
	}
	return nil
}

// seedReport warns about the objects that could not be loaded, and records in
// unloaded (the base's load: nil for the head's scaffolding) why each was refused,
// which the head's preview of the object says (baseNotLoaded).
func (r *runner) seedReport(failed []dryrun.Result, unloaded map[object.Key]string) {
	for _, f := range failed {
		if unloaded != nil {
			unloaded[f.ID.Key()] = f.Err.Message
		}
		// The server's answer may quote the object's own Secret values.
		r.deps.Secrets(f.Object.Get(), f.Live, f.Merged)
		where := "the ephemeral server"
		if f.Object.Source != "" {
			where = f.Object.Where()
		}
		r.deps.Warnf("could not load %s into the ephemeral server (%s): %s", f.ID.Display(), where, f.Err.Message)
	}
}
