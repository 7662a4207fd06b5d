package dryrun

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Flux's kustomize-controller applies a Kustomization's objects with fluxcd/pkg/ssa's
// ResourceManager (internal/controller/kustomization_controller.go, apply(); read
// from kustomize-controller commit 186fb3b2, which requires fluxcd/pkg/ssa v0.77.0):
// its own labels on every object (SetOwnerLabels), normalize.UnstructuredList, then
// per object (ApplyAll, manager_apply.go) a forced dry-run apply, a JSON patch that
// removes kubectl's last-applied annotation and moves the fields of kubectl's and
// its own pre-SSA managers to its apply entry (cleanupMetadata), and a forced
// apply, only when that patch changed something or the dry run differs.

// FluxFieldManager is the field manager kustomize-controller writes as (its
// controllerName, main.go).
const FluxFieldManager = "kustomize-controller"

// Flux's metadata keys and values (api/v1/kustomization_types.go).
const (
	fluxGroup        = "kustomize.toolkit.fluxcd.io"
	FluxNameLabel    = fluxGroup + "/name"
	FluxNSLabel      = fluxGroup + "/namespace"
	FluxSSAKey       = fluxGroup + "/ssa"
	fluxReconcileKey = fluxGroup + "/reconcile"
)

// fluxDefaultNamespace is where a Kustomization lives when drift.yaml names none.
const fluxDefaultNamespace = "flux-system"

var fluxProfile = &Profile{
	Name:         "flux",
	Method:       ServerSide,
	Manager:      FluxFieldManager,
	FixedManager: true,
	// dryRunApply and apply: client.ForceOwnership.
	Force: true,
	// controller-runtime's client sends no fieldValidation: the server's Warn.
	FieldValidation: "Warn",
	// cleanupMetadata's PatchReplaceFieldsManagers is a migration: the matched
	// managers' fields become kustomize-controller's before the apply.
	MigratesCSA:     true,
	MigrationNeeded: fluxMigrates,
	Migrated:        fluxMigrated,
	Prepare:         fluxPrepare,
	After:           fluxAfter,
	Managers:        []string{FluxFieldManager},
	Doc:             "Flux kustomize-controller (forced server-side apply as kustomize-controller with fluxcd/pkg/ssa's labels, normalization and managedFields cleanup)",
}

func init() { register(fluxProfile) }

// fluxSelector is a key and value that utils.AnyInMetadata matches, in labels or
// annotations, the value case-insensitively.
type fluxSelector struct{ key, value string }

var (
	// ApplyOptions.ExclusionSelector: never applied.
	fluxExcluded = []fluxSelector{{fluxReconcileKey, "disabled"}, {FluxSSAKey, "Ignore"}}
	// ApplyOptions.IfNotPresentSelector: applied only when absent.
	fluxIfNotPresent = fluxSelector{FluxSSAKey, "IfNotPresent"}
	// ApplyCleanupOptions.Exclusions: no cleanup.
	fluxMerge = fluxSelector{FluxSSAKey, "Merge"}
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
	fluxCleanupAnnotations = []string{LastAppliedAnnotation, "kustomize.toolkit.fluxcd.io/checksum", "fluxcd.io/sync-checksum"}
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
	{FluxFieldManager, metav1.ManagedFieldsOperationUpdate},
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

// fluxPrepare does what kustomize-controller does to an object before applying it:
// the owner labels (ResourceManager.SetOwnerLabels), normalize.UnstructuredList,
// and utils.RemoveCABundleFromCRD; an excluded object, or one marked IfNotPresent
// that exists, is skipped (shouldSkipApply).
func fluxPrepare(obj, live *unstructured.Unstructured, o Owner) (string, error) {
	if o.Name == "" {
		return "", fmt.Errorf("the flux applier needs the Kustomization that applies these objects: set flux.name (and flux.namespace, default %s) in drift.yaml", fluxDefaultNamespace)
	}
	for _, s := range fluxExcluded {
		if s.in(obj) || s.in(live) {
			return fmt.Sprintf("%s: %s excludes it from apply", s.key, s.value), nil
		}
	}
	if live != nil && live.GetUID() != "" && fluxIfNotPresent.in(obj) {
		return fmt.Sprintf("%s: %s and it exists", fluxIfNotPresent.key, fluxIfNotPresent.value), nil
	}
	ns := o.Namespace
	if ns == "" {
		ns = fluxDefaultNamespace
	}
	addLabels(obj, map[string]string{FluxNameLabel: o.Name, FluxNSLabel: ns})
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

// fluxAfter is the rest of what one ApplyAll step does to an existing object:
// cleanupMetadata's removal of the listed annotations and labels (unless the
// applied object sets them again), and no apply at all when that patch changes
// nothing and the dry run does not differ from the live object (the live object
// stays as it is, kustomize-controller's entry included).
func fluxAfter(merged, live *unstructured.Unstructured, _ Owner) {
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
	set := &fieldpath.Set{}
	for _, e := range obj.GetManagedFields() {
		if e.Manager == FluxFieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.FieldsV1 != nil {
			s := &fieldpath.Set{}
			if s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)) == nil {
				set = set.Union(s)
			}
		}
	}
	return set
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
	var out []metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 != nil {
			s := &fieldpath.Set{}
			if s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)) == nil && !s.Intersection(gone).Empty() {
				rest := s.Difference(gone)
				if rest.Empty() {
					continue
				}
				raw, err := rest.ToJSON()
				if err != nil {
					return
				}
				e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
			}
		}
		out = append(out, e)
	}
	obj.SetManagedFields(out)
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
