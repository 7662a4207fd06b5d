package prune

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/argocd"
	"github.com/drift-gitops/drift/internal/applier/flux"
	"github.com/drift-gitops/drift/internal/object"
)

// Controller names the controller object whose record of what it applied is the
// target's inventory: a Flux Kustomization's status.inventory, an Argo CD
// Application's status.resources.
type Controller struct {
	// Record is the controller's record: applier.FluxInventory or
	// applier.ArgoCDResources.
	Record applier.Record
	// Owner is the Kustomization or Application (Argo CD's own namespace when empty),
	// with Argo CD's tracking.
	Owner applier.Owner
	// Prune says whether the controller deletes what it no longer applies (the
	// Kustomization's spec.prune, the Application's syncPolicy.automated.prune); nil
	// reads it from the object in the cluster.
	Prune *bool
	// Source is where the target is defined, for failures.
	Source string
}

// argoNamespace is where Argo CD keeps Applications unless told otherwise.
const argoNamespace = "argocd"

// controller reads the controller object and examines each object its record lists
// that the change no longer renders.
func (p *pruner) controller(c Controller) {
	gk := schema.GroupKind{Group: "kustomize.toolkit.fluxcd.io", Kind: "Kustomization"}
	ns := c.Owner.Namespace
	if c.Record == applier.ArgoCDResources {
		gk = schema.GroupKind{Group: "argoproj.io", Kind: "Application"}
		if ns == "" {
			ns = argoNamespace
		}
	}
	res, _, err := p.resource(gk, ns)
	if err != nil {
		return // the controller is not installed: it has applied nothing here
	}
	live, err := p.get(res, c.Owner.Name)
	if err != nil {
		p.fail("cannot be read: %v", err)
		return
	}
	if live == nil {
		p.note("not in the cluster yet (a first apply): nothing to prune")
		return
	}
	prune := c.Prune
	if prune == nil {
		field := []string{"spec", "prune"}
		if c.Record == applier.ArgoCDResources {
			field = []string{"spec", "syncPolicy", "automated", "prune"}
		}
		v, _, _ := unstructured.NestedBool(live.Object, field...)
		prune = &v
	}
	var ids []object.ID
	if c.Record == applier.FluxInventory {
		ids = p.fluxEntries(live)
	} else {
		ids = p.argoEntries(live)
	}
	for _, id := range ids {
		p.candidate(id, func(obj *unstructured.Unstructured) (bool, string) { return p.controls(c, *prune, obj) })
	}
}

// controls says whether the controller deletes obj: it must carry the controller's
// mark for this Kustomization or Application, must not opt out of pruning, and the
// controller must prune.
func (p *pruner) controls(c Controller, prune bool, obj *unstructured.Unstructured) (bool, string) {
	labels, annotations := obj.GetLabels(), obj.GetAnnotations()
	if c.Record == applier.FluxInventory {
		if labels[flux.NameLabel] != c.Owner.Name || labels[flux.NamespaceLabel] != c.Owner.Namespace {
			return false, fmt.Sprintf("its kustomize.toolkit.fluxcd.io/name and /namespace labels do not name Kustomization %s/%s: Flux leaves it", c.Owner.Namespace, c.Owner.Name)
		}
		// kustomize-controller's deleteObjects: ssa.DeleteOptions.Exclusions.
		for _, mark := range [][2]string{{"kustomize.toolkit.fluxcd.io/prune", "disabled"}, {"kustomize.toolkit.fluxcd.io/reconcile", "disabled"}, {"kustomize.toolkit.fluxcd.io/ssa", "Ignore"}} {
			if key, value := mark[0], mark[1]; annotations[key] == value || labels[key] == value {
				return false, "it is marked " + key + ": " + value
			}
		}
		if !prune {
			return false, "the Kustomization's spec.prune is false: Flux leaves what it no longer applies"
		}
		return true, ""
	}
	app := argocd.InstanceName(c.Owner)
	tracked := strings.HasPrefix(annotations[argocd.TrackingIDAnnotation], app+":")
	if key := cmp.Or(c.Owner.InstanceLabel, "app.kubernetes.io/instance"); c.Owner.Tracking == argocd.TrackingLabel {
		tracked = labels[key] == app
	}
	if !tracked {
		return false, fmt.Sprintf("it does not carry Application %s's tracking: Argo CD leaves it", app)
	}
	if strings.Contains(annotations["argocd.argoproj.io/sync-options"], "Prune=false") {
		return false, "it is annotated argocd.argoproj.io/sync-options: Prune=false"
	}
	if !prune {
		return false, "the Application does not prune automatically (syncPolicy.automated.prune): Argo CD marks it to prune and deletes it only in a sync with pruning"
	}
	return true, ""
}

// fluxEntries are the objects a Kustomization's status.inventory lists
// (<namespace>_<name>_<group>_<kind>).
func (p *pruner) fluxEntries(live *unstructured.Unstructured) []object.ID {
	entries, _, _ := unstructured.NestedSlice(live.Object, "status", "inventory", "entries")
	var out []object.ID
	for _, e := range entries {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		version, _ := m["v"].(string)
		parts := strings.Split(id, "_")
		if len(parts) != 4 {
			p.fail("status.inventory entry %q is not <namespace>_<name>_<group>_<kind>", id)
			continue
		}
		out = append(out, object.ID{Namespace: parts[0], Name: parts[1], Group: parts[2], Kind: parts[3], Version: version})
	}
	return out
}

// argoEntries are the objects an Application's status.resources lists.
func (p *pruner) argoEntries(live *unstructured.Unstructured) []object.ID {
	resources, _, _ := unstructured.NestedSlice(live.Object, "status", "resources")
	var out []object.ID
	for _, r := range resources {
		m, _ := r.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, object.ID{Group: str("group"), Version: str("version"), Kind: str("kind"), Namespace: str("namespace"), Name: str("name")})
	}
	return out
}
