package prune

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// maxCascade bounds how deep deletions are followed through the controllers they
// delete (a Kustomization of Kustomizations, an app of apps).
const maxCascade = 10

// Argo CD's finalizers that make deleting an Application delete its resources
// (argoproj/argo-cd pkg/apis/application/v1alpha1: ResourcesFinalizerName and the
// propagation policy finalizers).
const (
	argoResourcesFinalizer  = "resources-finalizer.argocd.argoproj.io"
	argoBackgroundFinalizer = "resources-finalizer.argocd.argoproj.io/background"
)

// cascade follows what deleting a Flux Kustomization or an Argo CD Application does:
// its controller's finalizer deletes what it applied. For each such object among the
// deletes (and among what they delete, recursively), what its record lists is a
// deletion too, named by the chain, or kept when the controller leaves it:
//   - a Kustomization deletes its status.inventory when not suspended and its
//     deletionPolicy says so (MirrorPrune: spec.prune; Delete, WaitForTermination:
//     always; Orphan: never), each object carrying its labels and not opting out
//     (kustomize-controller's finalize and deleteObjects);
//   - an Application with the resources finalizer deletes its status.resources that
//     carry its tracking, but CRDs, itself, objects with Delete=false and Helm's
//     resource-policy keep, with foreground propagation (background with the
//     /background finalizer); without it, Argo CD orphans them (finalizeApplicationDeletion).
func (p *pruner) cascade(deletes []dryrun.Result, depth int, seen map[object.Key]bool) {
	if depth > maxCascade {
		return
	}
	for _, d := range deletes {
		if d.Err != nil || d.Live == nil || seen[d.ID.Key()] {
			continue
		}
		var more []dryrun.Result
		switch {
		case d.ID.Group == "kustomize.toolkit.fluxcd.io" && d.ID.Kind == "Kustomization":
			seen[d.ID.Key()] = true
			more = p.fluxCascade(d)
		case d.ID.Group == "argoproj.io" && d.ID.Kind == "Application":
			seen[d.ID.Key()] = true
			more = p.argoCascade(d)
		}
		p.cascade(more, depth+1, seen)
	}
}

// child is a pruner over the record of a controller object the change deletes.
func (p *pruner) child(what string, d dryrun.Result, propagation metav1.DeletionPropagation) *pruner {
	opts := p.opts
	opts.Propagation = propagation
	name := fmt.Sprintf("%s: deleted with %s %s/%s, which %s deletes", what, d.ID.Kind, d.ID.Namespace, d.ID.Name, d.Inventory)
	return &pruner{ctx: p.ctx, c: p.c, opts: opts, set: p.set, out: &Result{},
		inv: inventory.Inventory{Name: name, Obj: render.Object{Source: p.inv.Obj.Source, Doc: p.inv.Obj.Doc}}}
}

// fluxCascade is what deleting Kustomization d deletes.
func (p *pruner) fluxCascade(d dryrun.Result) []dryrun.Result {
	live := d.Live
	owner := applier.Owner{Name: live.GetName(), Namespace: live.GetNamespace()}
	c := p.child(fmt.Sprintf("Kustomization %s/%s status.inventory", owner.Namespace, owner.Name), d, metav1.DeletePropagationBackground)
	ids := c.fluxEntries(live)
	if len(ids) == 0 {
		return nil
	}
	if kc, _, _ := unstructured.NestedMap(live.Object, "spec", "kubeConfig"); kc != nil {
		c.note("what it applied to another cluster (spec.kubeConfig) is not read")
		p.merge(c)
		return nil
	}
	suspended, _, _ := unstructured.NestedBool(live.Object, "spec", "suspend")
	prune, _, _ := unstructured.NestedBool(live.Object, "spec", "prune")
	policy, _, _ := unstructured.NestedString(live.Object, "spec", "deletionPolicy")
	keep := ""
	switch {
	case suspended:
		keep = "the Kustomization is suspended: Flux's finalizer leaves what it applied"
	case policy == "Orphan":
		keep = "the Kustomization's deletionPolicy is Orphan: Flux leaves what it applied"
	case (policy == "" || policy == "MirrorPrune") && !prune:
		keep = "the Kustomization's spec.prune is false (deletionPolicy MirrorPrune): Flux leaves what it applied"
	}
	for _, id := range ids {
		if keep != "" {
			c.out.Kept = append(c.out.Kept, Kept{ID: id, Inventory: c.inv.Name, Reason: keep})
			continue
		}
		c.candidate(id, func(obj *unstructured.Unstructured) (bool, string) {
			return c.controls(Controller{Record: applier.FluxInventory, Owner: owner}, true, obj)
		})
	}
	return p.merge(c)
}

// argoCascade is what deleting Application d deletes.
func (p *pruner) argoCascade(d dryrun.Result) []dryrun.Result {
	live := d.Live
	owner := applier.Owner{Name: live.GetName(), Tracking: "annotation"}
	if ns := live.GetNamespace(); ns != argoNamespace {
		owner.Namespace = ns
	}
	finalizers := live.GetFinalizers()
	propagation := metav1.DeletePropagationForeground
	if slices.Contains(finalizers, argoBackgroundFinalizer) {
		propagation = metav1.DeletePropagationBackground
	}
	c := p.child(fmt.Sprintf("Application %s/%s status.resources", live.GetNamespace(), live.GetName()), d, propagation)
	ids := c.argoEntries(live)
	if len(ids) == 0 {
		return nil
	}
	dest, _, _ := unstructured.NestedStringMap(live.Object, "spec", "destination")
	if !(dest["server"] == "https://kubernetes.default.svc" || dest["name"] == "in-cluster" || (dest["server"] == "" && dest["name"] == "")) {
		c.note("its resources on cluster %s are not read", cmp.Or(dest["name"], dest["server"]))
		p.merge(c)
		return nil
	}
	cascades := slices.ContainsFunc(finalizers, func(f string) bool {
		return f == argoResourcesFinalizer || strings.HasPrefix(f, argoResourcesFinalizer+"/")
	})
	appDeleteFalse := false
	opts, _, _ := unstructured.NestedStringSlice(live.Object, "spec", "syncPolicy", "syncOptions")
	appDeleteFalse = slices.Contains(opts, "Delete=false")
	for _, id := range ids {
		if !cascades {
			c.out.Kept = append(c.out.Kept, Kept{ID: id, Inventory: c.inv.Name, Reason: "the Application has no resources finalizer (" + argoResourcesFinalizer + "): Argo CD deletes the Application and orphans its resources"})
			continue
		}
		c.candidate(id, func(obj *unstructured.Unstructured) (bool, string) {
			if owned, why := c.controls(Controller{Record: applier.ArgoCDResources, Owner: owner}, true, obj); !owned {
				return false, why
			}
			return argoDeletes(obj, appDeleteFalse, live)
		})
	}
	return p.merge(c)
}

// argoDeletes is Argo CD's shouldBeDeleted for an object of an Application being
// deleted with its resources.
func argoDeletes(obj *unstructured.Unstructured, appDeleteFalse bool, app *unstructured.Unstructured) (bool, string) {
	annotations := obj.GetAnnotations()
	switch {
	case obj.GetKind() == "CustomResourceDefinition" && strings.HasPrefix(obj.GetAPIVersion(), "apiextensions.k8s.io/"):
		return false, "Argo CD never deletes a CustomResourceDefinition with its Application"
	case obj.GetKind() == "Application" && obj.GetName() == app.GetName() && obj.GetNamespace() == app.GetNamespace():
		return false, "it is the Application itself"
	case strings.Contains(annotations["argocd.argoproj.io/sync-options"], "Delete=false"):
		return false, "it is annotated argocd.argoproj.io/sync-options: Delete=false"
	case !strings.Contains(annotations["argocd.argoproj.io/sync-options"], "Delete=true") && appDeleteFalse:
		return false, "the Application's syncOptions hold Delete=false"
	case strings.Contains(annotations["helm.sh/resource-policy"], "keep"):
		return false, "it is annotated helm.sh/resource-policy: keep"
	}
	return true, ""
}

// merge adds what a child pruner found to p's result, and returns its deletes.
func (p *pruner) merge(c *pruner) []dryrun.Result {
	p.out.Deletes = append(p.out.Deletes, c.out.Deletes...)
	p.out.Kept = append(p.out.Kept, c.out.Kept...)
	p.out.Notes = append(p.out.Notes, c.out.Notes...)
	p.out.Failures = append(p.out.Failures, c.out.Failures...)
	return c.out.Deletes
}
