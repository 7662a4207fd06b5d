package preview

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier/helm"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/sopsdoc"
	"github.com/drift-gitops/drift/internal/source"
)

// readHelmReleases prepares the targets the helm applier upgrades: each reads its
// release's deployed revision (what the upgrade starts from and renders the next
// revision of), and its cluster is opened to the chart's lookup, read-only, as helm
// upgrade's lookup reads the cluster.
func (r *runner) readHelmReleases(ctx context.Context, p *Preview) {
	n := 0
	for _, t := range p.Targets {
		if !t.Applier.Traits().UpgradesRelease || t.conn == nil || t.Skipped != "" {
			continue
		}
		if t.conn.lookupKey == "" && t.Lookup {
			n++
			t.conn.lookupKey = fmt.Sprintf("cluster-%d", n)
			r.deps.Cache.AllowLookup(t.conn.lookupKey, t.conn.Clients.Config)
		}
		owner := t.owner(t.conn)
		secrets, err := t.conn.Clients.Secrets(ctx, owner.Namespace)
		if err == nil {
			t.helm, err = helm.ReadRelease(secrets, t.conn.Clients.Mapper, owner.Namespace, owner.Name)
		}
		if err != nil {
			t.renderErr = err
			t.conn = nil // not rendered nor previewed: the report says why
		}
	}
}

// renders are the targets' renders under way.
type renders struct {
	all    sync.WaitGroup
	groups map[*clusterGroup]*sync.WaitGroup
}

// maxRendersWaiting bounds the targets asked of a render worker pool at once.
const maxRendersWaiting = 64

// startRenders starts rendering every target to preview through the cache, in plan
// order.
func (r *runner) startRenders(ctx context.Context, p *Preview) *renders {
	rs := &renders{groups: map[*clusterGroup]*sync.WaitGroup{}}
	group := map[*Target]*sync.WaitGroup{}
	for _, g := range p.groups {
		wg := &sync.WaitGroup{}
		rs.groups[g] = wg
		for _, t := range g.targets {
			group[t] = wg
		}
	}
	var todo []*Target
	for _, t := range p.Targets {
		if t.Skipped != "" || t.conn == nil || group[t] == nil || t.renderedFirst {
			continue
		}
		group[t].Add(1)
		todo = append(todo, t)
	}
	next := make(chan *Target, len(todo))
	for _, t := range todo {
		next <- t
	}
	close(next)
	// Many at once: the renderer bounds its workers (GOMAXPROCS) and renders what
	// waits in batches (render/worker.Pool); in this process (tests), GOMAXPROCS.
	concurrency := runtime.GOMAXPROCS(0)
	if r.deps.Cache != nil && r.deps.Cache.Worker != nil {
		concurrency = maxRendersWaiting
	}
	for range min(concurrency, len(todo)) {
		rs.all.Go(func() {
			for t := range next {
				r.render(ctx, t)
				group[t].Done()
			}
		})
	}
	return rs
}

// waitFor waits until the targets of g are rendered.
func (rs *renders) waitFor(g *clusterGroup) { rs.groups[g].Wait() }

// Wait waits until every target is rendered.
func (rs *renders) Wait() { rs.all.Wait() }

// render renders a target from the head. A render the run's end cut short is
// not the target's failure: it is left unrendered (Preview.cutShort).
func (r *runner) render(ctx context.Context, t *Target) {
	if err := r.head.CheckPaths([]string{t.Spec.Path}); err != nil {
		if r.base == nil || t.New || r.base.CheckPaths([]string{t.basePath(true)}) != nil {
			t.renderErr = err
			return
		}
		// The change removes the target's path: the head renders nothing of it, and
		// what its applier deletes of what the base rendered is previewed.
		t.Rendered = &render.Result{}
		t.notes = append(t.notes, fmt.Sprintf("the change removes %s: nothing of it is rendered in %s, and what its applier deletes of what %s renders is previewed", cmp.Or(t.Spec.Path, "."), r.head.Describe(), r.base.Describe()))
		return
	}
	t.Rendered, t.renderErr = r.renderIn(r.head, t, t.conn)
	if ctx.Err() != nil {
		t.Rendered, t.renderErr = nil, nil
		return
	}
	if t.conn.lookupKey != "" && t.Lookup && t.Applier.Traits().UpgradesRelease && r.deps.Cache.LookupHidSecrets(t.conn.lookupKey) {
		t.notes = append(t.notes, "Helm's lookup read this cluster's Secrets without their data (a pull request's templates get none): a value a chart keeps through lookup, such as a generated password, shows as changed; the runner's --lookup-secrets hands the data to the templates (docs/security.md)")
	}
}

// renderIn renders a target in a snapshot for a cluster: each of its sources, one
// after the other, and the namespace its applier creates when nothing renders it
// (Argo CD's CreateNamespace=true, a HelmRelease's install.createNamespace), as the
// applier applies it: the bare Namespace, first.
func (r *runner) renderIn(snap *source.Snapshot, t *Target, cl *cluster) (*render.Result, error) {
	first, more := t.renderSpec(cl), t.More
	if snap == r.base && len(t.BaseSpecs) > 0 {
		// The base as it defines the target (a discovered target's chart version).
		first, more = t.completeSpec(t.BaseSpecs[0], cl), t.BaseSpecs[1:]
	}
	var undecrypted []render.Failure
	var ksops []string
	switch {
	case first.Decrypt == sopsdoc.Provider && first.Renderer == render.RendererKustomize:
		undecrypted = r.decryptSources(snap, &first)
	case first.Renderer == render.RendererKustomize && !first.AsFlux:
		ksops, undecrypted = ksopsSources(snap.FS, &first)
	}
	res, err := r.deps.Cache.RenderSnapshot(snap, first)
	if err != nil {
		return res, err
	}
	// The target's own copy, which it drops object by object as their previews end
	// (stream.take), and no longer the cache's (a preview reads each rendering once).
	if cl != nil {
		defer r.deps.Cache.Forget(snap.Commit, first)
	}
	out := &render.Result{Objects: append([]render.Object(nil), res.Objects...), Failures: append([]render.Failure(nil), res.Failures...),
		Notes: append([]string(nil), res.Notes...), Inputs: res.Inputs}
	out.Failures = append(out.Failures, undecrypted...)
	out.Notes = append(out.Notes, ksops...)
	for _, spec := range more {
		spec = t.completeSpec(spec, cl)
		more, err := r.deps.Cache.RenderSnapshot(snap, spec)
		if err != nil {
			return nil, err
		}
		if cl != nil {
			r.deps.Cache.Forget(snap.Commit, spec)
		}
		out.Objects = append(out.Objects, more.Objects...)
		out.Failures = append(out.Failures, more.Failures...)
		out.Notes = append(out.Notes, more.Notes...)
	}
	if first.Decrypt == sopsdoc.Provider {
		r.decrypted(out, snap, t, first)
	}
	if first.Renderer == render.RendererResourceSet {
		operatorFilled(out)
	}
	if ns := t.CreateNamespace; ns != "" && !rendersNamespace(out.Objects, ns) {
		obj := render.Object{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, Source: cmp.Or(t.From, t.Name)}
		obj.Notes = []render.Note{{Reason: reason.NamespaceCreated, Message: fmt.Sprintf("%s creates namespace %s when it is missing", t.Applier.Name(), ns)}}
		out.Objects = append([]render.Object{obj}, out.Objects...)
	}
	return out, nil
}

// rendersNamespace reports whether objs hold Namespace ns.
func rendersNamespace(objs []render.Object, ns string) bool {
	for _, o := range objs {
		if id := o.ID(); id.Kind == "Namespace" && id.Group == "" && id.Version == "v1" && o.Name() == ns {
			return true
		}
	}
	return false
}
