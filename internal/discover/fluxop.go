package discover

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/fluxop"
	"github.com/drift-gitops/drift/internal/render"
)

// fluxInstance turns a Flux Operator FluxInstance into what its spec.sync makes, as
// flux-operator makes them: the source joins what Kustomizations' sourceRefs find,
// and the root Kustomization is a target. A FluxInstance without sync makes nothing;
// one whose reconciliation is disabled is skipped.
func (d *discovery) fluxInstance(f render.Object) []Target {
	obj := f.Get()
	self := Target{Kind: KindFluxInstance, Namespace: obj.GetNamespace(), ObjectName: obj.GetName(), Applier: applier.Flux,
		Name: fluxTargetName(KindFluxInstance, obj.GetNamespace(), obj.GetName()), definition: definitionOf(obj)}
	inst := obj.DeepCopy()
	if inst.GetNamespace() == "" {
		inst.SetNamespace(fluxop.DefaultNamespace)
	}
	if fluxop.ReconcileDisabled(inst.Object) {
		self.Skipped, self.ByController = "its reconciliation is disabled (fluxcd.controlplane.io/reconcile: disabled): the Flux Operator leaves what it made", true
		return []Target{self}
	}
	objs, err := fluxop.SyncObjects(inst.Object)
	if err != nil {
		self.Refused = fmt.Sprintf("FluxInstance %s: %v", objectName(inst.GetNamespace(), inst.GetName()), err)
		return []Target{self}
	}
	if len(objs) == 0 {
		return nil // no sync: it installs Flux, which drift does not preview
	}
	made := make([]render.Object, 0, len(objs))
	for _, o := range objs {
		made = append(made, render.Object{Obj: &unstructured.Unstructured{Object: o}, Source: f.Source, Doc: f.Doc})
	}
	d.pool.add(made)
	d.near = append(append([]render.Object{}, d.near...), made...)
	var out []Target
	for _, o := range made {
		if o.Get().GetKind() != KindKustomization {
			continue
		}
		t := d.kustomization(o.Get())
		t.From = fmt.Sprintf("made by FluxInstance %s (%s) from its spec.sync", objectName(inst.GetNamespace(), inst.GetName()), f.Where())
		out = append(out, t)
	}
	return out
}

// resourceSet turns a Flux Operator ResourceSet into a target: its resources for its
// static inputs, rendered in a render worker as flux-operator renders them, applied
// server-side as the operator applies them (field manager flux-operator).
func (d *discovery) resourceSet(f render.Object) Target {
	obj := f.Get()
	t := Target{Kind: KindResourceSet, Namespace: obj.GetNamespace(), ObjectName: obj.GetName(), Applier: applier.KubectlServerSide,
		Name: fluxTargetName(KindResourceSet, obj.GetNamespace(), obj.GetName()), definition: definitionOf(obj),
		DestNamespace: obj.GetNamespace(), Prune: true, FieldManager: "flux-operator"}
	if fluxop.ReconcileDisabled(obj.Object) {
		t.Skipped, t.ByController = "its reconciliation is disabled (fluxcd.controlplane.io/reconcile: disabled): the Flux Operator leaves what it made", true
		return t
	}
	var providers []map[string]any
	for _, p := range d.pool.all("ResourceSetInputProvider", obj.GetNamespace()) {
		providers = append(providers, p.Get().Object)
	}
	t.Specs = []render.Spec{{Path: f.Source, Renderer: render.RendererResourceSet,
		ResourceSet: &render.ResourceSetSpec{Object: obj.Object, Providers: providers, Source: f.Source, Doc: f.Doc}}}
	t.Notes = append(t.Notes, "applied by the Flux Operator: previewed as a server-side apply by field manager flux-operator")
	return t
}
