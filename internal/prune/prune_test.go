package prune

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

func configMap(ns, name, meta string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s%s}\ndata: {a: \"1\"}\n", name, ns, meta)
}

// A Flux Kustomization's status.inventory is the target's inventory: what it lists and
// the change no longer renders is deleted when it carries the Kustomization's labels
// and does not opt out; an entry already gone is a note; the deletes are dry runs.
func TestFluxInventoryDeletesWhatTheKustomizationAppliedAndNoLongerRenders(t *testing.T) {
	const ns = "prune-flux"
	c := cluster(t, ns)
	mine := ", labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}"
	create(t, configMap(ns, "kept-rendered", mine))
	create(t, configMap(ns, "dropped", mine))
	create(t, configMap(ns, "other-owner", ", labels: {kustomize.toolkit.fluxcd.io/name: infra, kustomize.toolkit.fluxcd.io/namespace: flux-system}"))
	create(t, configMap(ns, "opted-out", mine+", annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}"))
	entries := ""
	for _, name := range []string{"kept-rendered", "dropped", "other-owner", "opted-out", "gone"} {
		entries += fmt.Sprintf("    - {id: %s_%s__ConfigMap, v: v1}\n", ns, name)
	}
	create(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: true, path: ./apps}\nstatus:\n  inventory:\n    entries:\n"+entries)

	res, results := rendered(t, ns, configMap(ns, "kept-rendered", ""))
	got := Find(context.Background(), c, res, results, Options{Namespace: ns, Controller: &Controller{
		Record: applier.FluxInventory, Owner: applier.Owner{Name: "apps", Namespace: "flux-system"}, Source: "clusters/prod/apps.yaml"}})
	f := summary(t, got)
	if len(f.deletes) != 1 || f.deletes["ConfigMap/dropped"] != "Kustomization flux-system/apps status.inventory" {
		t.Errorf("deletes %v", f.deletes)
	}
	if !strings.Contains(f.kept["ConfigMap/other-owner"], "do not name Kustomization flux-system/apps") ||
		f.kept["ConfigMap/opted-out"] != "it is marked kustomize.toolkit.fluxcd.io/prune: disabled" || len(f.kept) != 2 {
		t.Errorf("kept %v", f.kept)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], ns+"/gone is listed but already gone") {
		t.Errorf("notes %q", got.Notes)
	}
	stillLive(t, c, object.ID{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "dropped"})

	// The Kustomization's spec.prune false: Flux leaves what it no longer applies.
	no := false
	got = Find(context.Background(), c, res, results, Options{Namespace: ns, Controller: &Controller{
		Record: applier.FluxInventory, Owner: applier.Owner{Name: "apps", Namespace: "flux-system"}, Prune: &no}})
	if f := summary(t, got); len(f.deletes) != 0 || !strings.Contains(f.kept["ConfigMap/dropped"], "spec.prune is false") {
		t.Errorf("prune false: deletes %v, kept %v", f.deletes, f.kept)
	}
}

// An Argo CD Application's status.resources is the target's inventory: an object
// it lists is deleted only when it carries the Application's tracking, does not say
// Prune=false, and the Application prunes automatically; a first sync finds nothing.
func TestArgoCDStatusResourcesDeleteTrackedObjectsWhenTheApplicationPrunes(t *testing.T) {
	const ns = "prune-argo"
	c := cluster(t, ns)
	tracked := func(name string) string {
		return fmt.Sprintf(", annotations: {argocd.argoproj.io/tracking-id: 'shop:/ConfigMap:%s/%s'", ns, name)
	}
	create(t, configMap(ns, "dropped", tracked("dropped")+"}"))
	create(t, configMap(ns, "untracked", ""))
	create(t, configMap(ns, "no-prune", tracked("no-prune")+", argocd.argoproj.io/sync-options: Prune=false}"))
	resources := ""
	for _, name := range []string{"dropped", "untracked", "no-prune"} {
		resources += fmt.Sprintf("  - {version: v1, kind: ConfigMap, namespace: %s, name: %s}\n", ns, name)
	}
	create(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec: {syncPolicy: {automated: {prune: true}}}\nstatus:\n  resources:\n"+resources)

	res, results := rendered(t, ns)
	owner := applier.Owner{Name: "shop", Tracking: "annotation"}
	f := summary(t, Find(context.Background(), c, res, results, Options{Namespace: ns, Controller: &Controller{Record: applier.ArgoCDResources, Owner: owner}}))
	if len(f.deletes) != 1 || f.deletes["ConfigMap/dropped"] != "Application argocd/shop status.resources" {
		t.Errorf("deletes %v", f.deletes)
	}
	if !strings.Contains(f.kept["ConfigMap/untracked"], "does not carry Application shop's tracking") ||
		!strings.Contains(f.kept["ConfigMap/no-prune"], "Prune=false") || len(f.kept) != 2 {
		t.Errorf("kept %v", f.kept)
	}
	stillLive(t, c, object.ID{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "dropped"})

	// Label tracking: the instance label, not the annotation, marks the Application's
	// objects.
	label := applier.Owner{Name: "shop", Tracking: "label", InstanceLabel: "app.kubernetes.io/instance"}
	f = summary(t, Find(context.Background(), c, res, results, Options{Namespace: ns, Controller: &Controller{Record: applier.ArgoCDResources, Owner: label}}))
	if len(f.deletes) != 0 || len(f.kept) != 3 {
		t.Errorf("label tracking: deletes %v, kept %v", f.deletes, f.kept)
	}

	got := Find(context.Background(), c, res, results, Options{Namespace: ns, Controller: &Controller{Record: applier.ArgoCDResources, Owner: applier.Owner{Name: "new-app"}}})
	if len(got.Deletes)+len(got.Kept) != 0 || len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "a first apply") {
		t.Errorf("an Application not in the cluster: %+v", got)
	}
}

// An ApplySet parent the target renders: its members are the live objects of the
// group-kinds the live parent lists that carry its part-of label; one the change no
// longer renders is deleted. A parent whose id label is not KEP-3659's for it is an
// inventory failure, and nothing is deleted.
func TestApplySetMembersTheChangeDropsAreDeleted(t *testing.T) {
	const ns = "prune-applyset"
	c := cluster(t, ns)
	id := inventory.ApplySetID("set", ns, "ConfigMap", "")
	parent := configMap(ns, "set", ", labels: {applyset.kubernetes.io/id: "+id+"}, annotations: {applyset.kubernetes.io/contains-group-kinds: ConfigMap, applyset.kubernetes.io/tooling: kubectl/v1.36}")
	create(t, parent)
	member := ", labels: {applyset.kubernetes.io/part-of: " + id + "}"
	create(t, configMap(ns, "kept", member))
	create(t, configMap(ns, "dropped", member))
	create(t, configMap(ns, "another-set", ", labels: {applyset.kubernetes.io/part-of: applyset-other-v1}"))

	res, results := rendered(t, ns, parent, configMap(ns, "kept", member))
	got := Find(context.Background(), c, res, results, Options{Namespace: ns})
	f := summary(t, got)
	if len(f.deletes) != 1 || f.deletes["ConfigMap/dropped"] != "ApplySet ConfigMap "+ns+"/set" || len(f.kept) != 0 || len(got.Failures) != 0 {
		t.Errorf("deletes %v, kept %v, failures %+v", f.deletes, f.kept, got.Failures)
	}

	wrong := configMap(ns, "set", ", labels: {applyset.kubernetes.io/id: applyset-not-mine-v1}")
	res, results = rendered(t, ns, wrong)
	got = Find(context.Background(), c, res, results, Options{Namespace: ns})
	if len(got.Deletes) != 0 || len(got.Failures) != 1 || got.Failures[0].Reason != reason.Inventory || !strings.Contains(got.Failures[0].Message, "does not belong to this object") {
		t.Errorf("a parent with another id: deletes %v, failures %+v", got.Deletes, got.Failures)
	}
}

// What a deleted Application and Kustomization delete in turn: the root Application
// deletes a Kustomization and an Application it tracked; the Kustomization (prune:
// true) deletes what its inventory lists, the Application (resources finalizer) what
// its status.resources lists and carries its tracking, but never a CRD; each named by
// the chain that deletes it.
func TestCascadeFollowsWhatDeletedControllersDelete(t *testing.T) {
	const ns = "prune-cascade"
	c := cluster(t, ns)
	create(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: cascade-apps, namespace: flux-system, annotations: {argocd.argoproj.io/tracking-id: 'root:kustomize.toolkit.fluxcd.io/Kustomization:flux-system/cascade-apps'}}\n"+
		"spec: {prune: true}\nstatus: {inventory: {entries: [{id: "+ns+"_k1__ConfigMap, v: v1}]}}\n")
	create(t, configMap(ns, "k1", ", labels: {kustomize.toolkit.fluxcd.io/name: cascade-apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}"))
	create(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: child, namespace: argocd, finalizers: [resources-finalizer.argocd.argoproj.io], annotations: {argocd.argoproj.io/tracking-id: 'root:argoproj.io/Application:argocd/child'}}\n"+
		"spec: {destination: {server: 'https://kubernetes.default.svc'}}\nstatus: {resources: [{version: v1, kind: ConfigMap, namespace: "+ns+", name: a1}, {group: apiextensions.k8s.io, version: v1, kind: CustomResourceDefinition, name: gadgets.cascade.test}]}\n")
	create(t, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.cascade.test, annotations: {argocd.argoproj.io/tracking-id: 'child:apiextensions.k8s.io/CustomResourceDefinition:/gadgets.cascade.test'}}\n"+
		"spec: {group: cascade.test, scope: Namespaced, names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}\n")
	create(t, configMap(ns, "a1", fmt.Sprintf(", annotations: {argocd.argoproj.io/tracking-id: 'child:/ConfigMap:%s/a1'}", ns)))
	create(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: root, namespace: argocd}\nspec: {syncPolicy: {automated: {prune: true}}}\n"+
		"status: {resources: [{group: kustomize.toolkit.fluxcd.io, version: v1, kind: Kustomization, namespace: flux-system, name: cascade-apps}, {group: argoproj.io, version: v1alpha1, kind: Application, namespace: argocd, name: child}]}\n")

	res, results := rendered(t, ns)
	got := Find(context.Background(), c, res, results, Options{Namespace: ns, Controller: &Controller{Record: applier.ArgoCDResources, Owner: applier.Owner{Name: "root", Tracking: "annotation"}}})
	f := summary(t, got)
	want := map[string]string{
		"Kustomization/cascade-apps": "Application argocd/root status.resources",
		"Application/child":          "Application argocd/root status.resources",
		"ConfigMap/k1":               "Kustomization flux-system/cascade-apps status.inventory: deleted with Kustomization flux-system/cascade-apps, which Application argocd/root status.resources deletes",
		"ConfigMap/a1":               "Application argocd/child status.resources: deleted with Application argocd/child, which Application argocd/root status.resources deletes",
	}
	if len(f.deletes) != len(want) {
		t.Errorf("deletes %v", f.deletes)
	}
	for k, v := range want {
		if f.deletes[k] != v {
			t.Errorf("%s: deleted by %q, want %q", k, f.deletes[k], v)
		}
	}
	if why := f.kept["CustomResourceDefinition/gadgets.cascade.test"]; why != "Argo CD never deletes a CustomResourceDefinition with its Application" {
		t.Errorf("the child's CRD: kept %q (kept %v)", why, f.kept)
	}
	for _, n := range []string{"k1", "a1"} {
		stillLive(t, c, object.ID{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: n})
	}
}
