package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/dryrun/ephemeral"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/prune"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

const ephemeralCluster = "ephemeral"

// startEphemeral starts a throwaway API server for one cluster of the run. It is
// empty until seedEphemeral loads it.
func (o *diffOptions) startEphemeral(ctx context.Context) (*cluster, error) {
	assets, err := ephemeral.AssetsDir(o.getenv)
	if err != nil {
		return nil, err
	}
	server, err := ephemeral.Start(ctx, assets)
	if err != nil {
		return nil, err
	}
	clients, err := dryrun.NewClientsWithin(ctx, server.Config, o.Concurrency)
	if err != nil {
		_ = server.Stop()
		return nil, err
	}
	ns := "default"
	if o.kube.Namespace != nil && *o.kube.Namespace != "" {
		ns = *o.kube.Namespace
	}
	return &cluster{clients: clients, namespace: ns, requestTimeout: defaultRequestTimeout,
		absent: map[object.Key]bool{}, seeded: map[object.Key]bool{}, stop: func() { _ = server.Stop() }}, nil
}

// seedBase loads into an ephemeral server, for real, every object the base renders
// for the targets: CustomResourceDefinitions and Namespaces first. Targets of the same
// cluster that are not diffed (skipped) still contribute their Namespaces and CRDs,
// which the diffed targets may need; taken from the base, or from the head without one.
func (o *diffOptions) seedBase(ctx context.Context, cl *cluster, targets, others []*runTarget, head, base *source.Snapshot, cache *render.Cache) error {
	var scaffolding []render.Object
	from := base
	if from == nil {
		from = head
	}
	for _, t := range others {
		if from.CheckPaths([]string{t.spec.Path}) != nil {
			continue
		}
		if t.renderer == "" {
			t.renderer = render.Detect(from.FS, t.spec.Path)
		}
		res, err := cache.Render(snapshotKey(from), from.FS, t.renderSpec(cl))
		if err != nil {
			continue
		}
		for _, obj := range res.Objects {
			if k := obj.ID().Key(); isScaffolding(obj.ID().GroupKind()) && !cl.seeded[k] {
				scaffolding = append(scaffolding, obj)
				cl.seeded[k] = true
				// Without a base nothing is deployed: a diffed target that renders the same
				// object still sees it as an addition.
				cl.absent[k] = base == nil
			}
		}
	}
	if base == nil {
		o.seedReport(dryrun.Seed(ctx, cl.clients, scaffolding, dryrun.Options{FieldManager: o.FieldManager, Namespace: cl.namespace, Concurrency: o.Concurrency}))
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while loading the ephemeral server: %w", context.Cause(ctx))
		}
		return nil
	}
	type batch struct {
		scaffolding, objs, all []render.Object
		namespace              string
		opts                   dryrun.Options
	}
	var batches []batch
	for _, t := range targets {
		if base.CheckPaths([]string{t.spec.Path}) != nil {
			continue // the target is new
		}
		res, err := cache.Render(snapshotKey(base), base.FS, t.renderSpec(cl))
		if err != nil {
			o.warnf("target %s cannot be rendered in the base (%s): %v", t.name, base.Describe(), err)
			continue
		}
		for _, f := range res.Failures {
			o.warnf("the base (%s) has a document that cannot be loaded: %s", base.Describe(), f.Error())
		}
		// Seeded as the target's applier leaves them (its labels, annotations and
		// field manager), its Namespaces and CRDs first.
		b := batch{all: res.Objects, namespace: t.namespaceIn(cl), opts: t.dryRunOptions(o)}
		b.opts.Concurrency = o.Concurrency
		for _, obj := range res.Objects {
			k := obj.ID().Key()
			switch {
			case !isScaffolding(obj.ID().GroupKind()):
				b.objs = append(b.objs, obj)
			case !cl.seeded[k]:
				b.scaffolding = append(b.scaffolding, obj)
			}
			cl.seeded[k] = true
		}
		batches = append(batches, b)
	}
	o.seedReport(dryrun.Seed(ctx, cl.clients, scaffolding, dryrun.Options{FieldManager: o.FieldManager, Namespace: cl.namespace, Concurrency: o.Concurrency}))
	for _, b := range batches {
		opts := b.opts
		opts.Namespace = cl.namespace
		o.seedReport(dryrun.Seed(ctx, cl.clients, b.scaffolding, opts))
	}
	for _, b := range batches {
		o.seedReport(dryrun.Seed(ctx, cl.clients, b.objs, b.opts))
		// What the applier leaves besides the objects: inventories' lists and marks.
		if err := prune.MarkAsApplied(ctx, cl.clients, b.all, b.namespace); err != nil {
			o.warnf("the base's inventory could not be recorded in the ephemeral server (%v): prune candidates may be missing", err)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while loading the base into the ephemeral server: %w", context.Cause(ctx))
	}
	return nil
}

// seedHeadScaffolding loads the Namespaces and CRDs only the head has, so that the
// objects in them can be previewed; they are marked absent and reported as additions.
func (o *diffOptions) seedHeadScaffolding(ctx context.Context, cl *cluster, targets []*runTarget) error {
	var scaffolding []render.Object
	for _, t := range targets {
		if t.rendered == nil {
			continue
		}
		for _, obj := range t.rendered.Objects {
			k := obj.ID().Key()
			if isScaffolding(obj.ID().GroupKind()) && !cl.seeded[k] {
				scaffolding = append(scaffolding, obj)
				cl.absent[k], cl.seeded[k] = true, true
			}
		}
	}
	if len(scaffolding) == 0 {
		return nil
	}
	o.seedReport(dryrun.Seed(ctx, cl.clients, scaffolding, dryrun.Options{FieldManager: o.FieldManager, Namespace: cl.namespace, Concurrency: o.Concurrency}))
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while loading the ephemeral server: %w", context.Cause(ctx))
	}
	return nil
}

func (o *diffOptions) seedReport(failed []dryrun.Result) {
	for _, f := range failed {
		// The server's answer may quote the object's own Secret values.
		o.scrub.AddSecrets(f.Object.Obj, f.Live, f.Merged)
		where := "the ephemeral server"
		if f.Object.Source != "" {
			where = f.Object.Where()
		}
		o.warnf("could not load %s into the ephemeral server (%s): %s", f.ID.Display(), where, f.Err.Message)
	}
}

// isScaffolding reports kinds other objects need to exist first: Namespaces and CRDs.
func isScaffolding(gk schema.GroupKind) bool {
	return gk == schema.GroupKind{Kind: "Namespace"} ||
		gk == schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
}
