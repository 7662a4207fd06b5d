// Package flux is Flux's kustomize-controller as an applier: a forced server-side
// apply as kustomize-controller, with fluxcd/pkg/ssa's labels, normalization and
// managedFields cleanup, of objects built as Flux builds a Kustomization's path.
package flux

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/fields"
	"github.com/drift-gitops/drift/internal/applier/serverside"
)

// Flux's kustomize-controller applies a Kustomization's objects with fluxcd/pkg/ssa's
// ResourceManager (internal/controller/kustomization_controller.go, apply(); read
// from kustomize-controller commit 186fb3b2, which requires fluxcd/pkg/ssa v0.77.0):
// its own labels on every object (SetOwnerLabels), normalize.UnstructuredList, then
// per object (ApplyAll, manager_apply.go) a forced dry-run apply, a JSON patch that
// removes kubectl's last-applied annotation and moves the fields of kubectl's and
// its own pre-SSA managers to its apply entry (cleanupMetadata), and a forced
// apply, only when that patch changed something or the dry run differs.

// FieldManager is the field manager kustomize-controller writes as (its
// controllerName, main.go).
const FieldManager = "kustomize-controller"

// Flux's metadata keys and values (api/v1/kustomization_types.go).
const (
	group          = "kustomize.toolkit.fluxcd.io"
	NameLabel      = group + "/name"
	NamespaceLabel = group + "/namespace"
	SSAKey         = group + "/ssa"
	reconcileKey   = group + "/reconcile"
)

// DefaultNamespace is where a Kustomization lives when drift.yaml names none.
const DefaultNamespace = "flux-system"

type flux struct{ applier.Base }

// New returns the flux applier.
func New() applier.Applier { return flux{} }

func (flux) Name() applier.Name { return applier.Flux }

func (flux) Doc() string {
	return "Flux kustomize-controller (forced server-side apply as kustomize-controller with fluxcd/pkg/ssa's labels, normalization and managedFields cleanup)"
}

func (flux) Sending() applier.Sending {
	return applier.Sending{
		Method:       applier.ServerSide,
		Manager:      FieldManager,
		ManagerFixed: true,
		// dryRunApply and apply: client.ForceOwnership.
		Force: true,
		// controller-runtime's client sends no fieldValidation: the server's Warn.
		FieldValidation: "Warn",
		Managers:        []string{FieldManager},
		// cleanupMetadata's PatchReplaceFieldsManagers is a migration: the matched
		// managers' fields become kustomize-controller's before the apply.
		Migration: migration{},
	}
}

// Traits: Flux's record is the Kustomization's status.inventory, and it builds the
// path as a Kustomization.
func (flux) Traits() applier.Traits {
	return applier.Traits{Record: applier.FluxInventory, BuildsAsFlux: true}
}

// Owner is the Kustomization drift.yaml's flux: names: by default the target's name,
// in flux-system.
func (flux) Owner(d applier.Declared) applier.Owner {
	return applier.Owner{Name: cmp.Or(d.Kustomization.Name, d.Target), Namespace: cmp.Or(d.Kustomization.Namespace, DefaultNamespace)}
}

func (f flux) Send(ctx context.Context, s applier.Server, o applier.Object) (applier.Sent, error) {
	return serverside.Send(ctx, s, o, f.Name(), f.Sending().Migration)
}

// migration is cleanupMetadata's move of kubectl's and kustomize-controller's own
// pre-SSA managers' fields to its apply entry.
type migration struct{}

func (migration) Needed(live *unstructured.Unstructured, _ string) bool { return fluxMigrates(live) }

func (migration) Moves(merged *unstructured.Unstructured, e metav1.ManagedFieldsEntry, _ bool) bool {
	return fluxMigrated(merged, e)
}

func (migration) KeepsLastApplied(string) string { return "" }

// Before: Flux takes over kubectl's managers, client- and server-side.
func (migration) Before() string {
	return "by kubectl (client-side apply, edit, label or server-side apply)"
}

// fluxSelector is a key and value that utils.AnyInMetadata matches, in labels or
// annotations, the value case-insensitively.
type fluxSelector struct{ key, value string }

var (
	// ApplyOptions.ExclusionSelector: never applied.
	fluxExcluded = []fluxSelector{{reconcileKey, "disabled"}, {SSAKey, "Ignore"}}
	// ApplyOptions.IfNotPresentSelector: applied only when absent.
	fluxIfNotPresent = fluxSelector{SSAKey, "IfNotPresent"}
	// ApplyCleanupOptions.Exclusions: no cleanup.
	fluxMerge = fluxSelector{SSAKey, "Merge"}
)

func (s fluxSelector) in(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	for _, m := range []map[string]string{obj.GetLabels(), obj.GetAnnotations()} {
		if v := m[s.key]; v != "" && strings.EqualFold(v, s.value) {
			return true
		}
	}
	return false
}

// The metadata apply() asks cleanupMetadata to remove (ApplyCleanupOptions).
var (
	fluxCleanupAnnotations = []string{applier.LastAppliedAnnotation, "kustomize.toolkit.fluxcd.io/checksum", "fluxcd.io/sync-checksum"}
	fluxCleanupLabels      = []string{"fluxcd.io/sync-gc-mark"}
)

// fluxCleanupManagers are ApplyCleanupOptions.FieldManagers as apply() lists them,
// matched as pkg/ssa's matchFieldManager does: by prefix (ExactMatch is false),
// operation, and never on a subresource. The kubectl prefix also catches
// kubectl-client-side-apply, kubectl-last-applied, kubectl-edit, kubectl-label...
var fluxCleanupManagers = []struct {
	prefix string
	op     metav1.ManagedFieldsOperationType
}{
	{"kubectl", metav1.ManagedFieldsOperationApply},
	{"kubectl", metav1.ManagedFieldsOperationUpdate},
	{"before-first-apply", metav1.ManagedFieldsOperationUpdate},
	{FieldManager, metav1.ManagedFieldsOperationUpdate},
}

func fluxCleanupManager(e metav1.ManagedFieldsEntry) bool {
	if e.Subresource != "" {
		return false
	}
	for _, m := range fluxCleanupManagers {
		if e.Operation == m.op && strings.HasPrefix(e.Manager, m.prefix) {
			return true
		}
	}
	return false
}

// Prepare does what kustomize-controller does to an object before applying it: the
// owner labels (ResourceManager.SetOwnerLabels), normalize.UnstructuredList, and
// utils.RemoveCABundleFromCRD; an excluded object, or one marked IfNotPresent that
// exists, is skipped (shouldSkipApply).
func (flux) Prepare(obj, live *unstructured.Unstructured, o applier.Owner) (string, error) {
	if o.Name == "" {
		return "", fmt.Errorf("the flux applier needs the Kustomization that applies these objects: set flux.name (and flux.namespace, default %s) in drift.yaml", DefaultNamespace)
	}
	for _, s := range fluxExcluded {
		if s.in(obj) || s.in(live) {
			return fmt.Sprintf("%s: %s excludes it from apply", s.key, s.value), nil
		}
	}
	if live != nil && live.GetUID() != "" && fluxIfNotPresent.in(obj) {
		return fmt.Sprintf("%s: %s and it exists", fluxIfNotPresent.key, fluxIfNotPresent.value), nil
	}
	applier.AddLabels(obj, map[string]string{NameLabel: o.Name, NamespaceLabel: cmp.Or(o.Namespace, DefaultNamespace)})
	if err := normalize.UnstructuredList([]*unstructured.Unstructured{obj}); err != nil {
		return "", fmt.Errorf("failed to normalize as kustomize-controller does: %w", err)
	}
	ssautil.RemoveCABundleFromCRD(obj)
	return "", nil
}

// fluxCleans reports whether cleanupMetadata runs for an object: not when the
// applied object or the live one says ssa: Merge. merged, the server's answer,
// carries the applied object's annotation.
func fluxCleans(merged, live *unstructured.Unstructured) bool {
	return !fluxMerge.in(merged) && !fluxMerge.in(live)
}

// fluxMigrates: cleanupMetadata moves fields when a listed manager has an entry.
func fluxMigrates(live *unstructured.Unstructured) bool {
	if live == nil || fluxMerge.in(live) {
		return false
	}
	for _, e := range live.GetManagedFields() {
		if fluxCleanupManager(e) {
			return true
		}
	}
	return false
}

// fluxMigrated picks the entries PatchReplaceFieldsManagers merges into
// kustomize-controller's apply entry, none under ssa: Merge.
func fluxMigrated(merged *unstructured.Unstructured, e metav1.ManagedFieldsEntry) bool {
	return !fluxMerge.in(merged) && fluxCleanupManager(e)
}

// After is the rest of what one ApplyAll step does to an existing object:
// cleanupMetadata's removal of the listed annotations and labels (unless the applied
// object sets them again), and no apply at all when that patch changes nothing and
// the dry run does not differ from the live object (the live object stays as it is,
// kustomize-controller's entry included).
func (flux) After(merged, live *unstructured.Unstructured, _ applier.Owner) {
	if live == nil {
		return
	}
	patched := false
	if fluxCleans(merged, live) {
		patched = fluxMigrates(live)
		applied := fluxApplied(merged)
		for _, k := range fluxCleanupAnnotations {
			if _, ok := live.GetAnnotations()[k]; ok {
				patched = true
				fluxRemoveMeta(merged, applied, "annotations", k)
			}
		}
		for _, k := range fluxCleanupLabels {
			if _, ok := live.GetLabels()[k]; ok {
				patched = true
				fluxRemoveMeta(merged, applied, "labels", k)
			}
		}
	}
	if !patched && !fluxDrifted(live, merged) {
		*merged = *live.DeepCopy()
	}
}

// fluxApplied is the field set of kustomize-controller's apply entry.
func fluxApplied(obj *unstructured.Unstructured) *fieldpath.Set {
	return fields.Owned(obj.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
	})
}

// fluxRemoveMeta removes metadata.<field>[key] as cleanupMetadata's JSON patch
// does before the apply: gone from the object and from every manager's fields,
// unless the applied object sets it again.
func fluxRemoveMeta(obj *unstructured.Unstructured, applied *fieldpath.Set, field, key string) {
	path := fieldpath.MakePathOrDie("metadata", field, key)
	if applied.Has(path) {
		return
	}
	m, _, _ := unstructured.NestedStringMap(obj.Object, "metadata", field)
	if _, ok := m[key]; !ok {
		return
	}
	delete(m, key)
	gone := fieldpath.NewSet(path)
	if len(m) == 0 {
		// The map is gone too, and with it every manager's ownership of it.
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
		gone.Insert(fieldpath.MakePathOrDie("metadata", field))
	} else {
		_ = unstructured.SetNestedStringMap(obj.Object, m, "metadata", field)
	}
	if mfs, err := fields.Without(obj.GetManagedFields(), gone); err == nil {
		obj.SetManagedFields(mfs)
	}
}

// fluxDrifted is the ResourceManager's hasDrifted: labels, annotations, or anything
// outside metadata and status.
func fluxDrifted(live, dryRun *unstructured.Unstructured) bool {
	if dryRun.GetResourceVersion() == "" {
		return true
	}
	if !apiequality.Semantic.DeepEqual(dryRun.GetLabels(), live.GetLabels()) ||
		!apiequality.Semantic.DeepEqual(dryRun.GetAnnotations(), live.GetAnnotations()) {
		return true
	}
	return !apiequality.Semantic.DeepEqual(fluxBody(dryRun), fluxBody(live))
}

// fluxBody is prepareObjectForDiff: the object without metadata and status.
func fluxBody(obj *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata")
	unstructured.RemoveNestedField(c.Object, "status")
	if err := normalize.DryRunUnstructured(c); err != nil {
		return obj.Object
	}
	return c.Object
}
