package applier

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/applier/fields"
)

// Client-side apply, which every applier here meets on objects applied before it:
// kubectl's last-applied-configuration annotation and the managers that write it.

// LastAppliedAnnotation is where client-side apply keeps what it applied last.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// LastAppliedPath is the last-applied-configuration annotation as a field path.
var LastAppliedPath = fieldpath.MakePathOrDie("metadata", "annotations", LastAppliedAnnotation)

// ClientSideFieldManager is the manager kubectl's client-side apply writes as.
const ClientSideFieldManager = "kubectl-client-side-apply"

// BeforeFirstApply is the manager the API server records for the fields of an
// object that existed before managedFields were.
const BeforeFirstApply = "before-first-apply"

// ClientSideManagers are the managers client-side apply leaves in managedFields.
var ClientSideManagers = []string{ClientSideFieldManager, BeforeFirstApply}

// AppliedClientSide reports whether live was last applied client-side by another
// manager than the one applying now: the upgrade path of the server-side apply
// design, on which kubectl apply --server-side, Flux and Argo CD move the
// client-side managers' fields to their own (client-go's csaupgrade) before applying.
func AppliedClientSide(live *unstructured.Unstructured, manager string) bool {
	if live == nil || slices.Contains(ClientSideManagers, manager) {
		return false
	}
	return slices.ContainsFunc(fields.Headers(live), func(mf metav1.ManagedFieldsEntry) bool {
		return slices.Contains(ClientSideManagers, mf.Manager) && mf.Operation == metav1.ManagedFieldsOperationUpdate
	})
}

// Migration is how an applier takes over an object applied client-side before: the
// fields of the client-side managers become its own (client-go's csaupgrade), so
// that its apply removes the fields the repository dropped.
// internal/applier/serverside carries it out; CSAMigration is kubectl's.
type Migration interface {
	// Needed reports whether applying over live as manager migrates it.
	Needed(live *unstructured.Unstructured, manager string) bool
	// Moves reports whether the migration moves entry e of merged (the server's
	// answer to the apply) to the applier; byDefault is kubectl's choice: an update by
	// a client-side apply manager or by an owner of the last-applied annotation.
	Moves(merged *unstructured.Unstructured, e metav1.ManagedFieldsEntry, byDefault bool) bool
	// KeepsLastApplied is the manager that keeps the last-applied annotation across
	// the applier's applies as manager ("": none does, and the server drops it).
	KeepsLastApplied(manager string) string
	// Before says how the object was applied before, for the warning.
	Before() string
}

// CSAMigration is kubectl apply --server-side's migration (pkg/cmd/apply:
// saveLastApplyAnnotationIfNecessary, then migrateToSSAIfNecessary): of an object
// last applied client-side by another manager, kubectl's choice of entries;
// LastApplied keeps the annotation when the manager is kubectl's own.
type CSAMigration struct {
	// LastApplied is the manager that keeps the annotation (kubectl's
	// kubectl-last-applied) when kubectl applies as manager kubectl; "": none.
	LastApplied string
}

// Needed: an update by a client-side apply manager (AppliedClientSide).
func (CSAMigration) Needed(live *unstructured.Unstructured, manager string) bool {
	return AppliedClientSide(live, manager)
}

// Moves: kubectl's choice.
func (CSAMigration) Moves(_ *unstructured.Unstructured, _ metav1.ManagedFieldsEntry, byDefault bool) bool {
	return byDefault
}

// KeepsLastApplied: LastApplied, only as kubectl's own manager.
func (m CSAMigration) KeepsLastApplied(manager string) string {
	if manager != KubectlFieldManager {
		return ""
	}
	return m.LastApplied
}

// Before: client-side.
func (CSAMigration) Before() string {
	return "client-side (by kubectl-client-side-apply, or whoever wrote its last-applied-configuration)"
}

// KubectlFieldManager is the field manager of kubectl apply --server-side.
const KubectlFieldManager = "kubectl"

// AddLabels sets labels on obj, keeping the others.
func AddLabels(obj *unstructured.Unstructured, kv map[string]string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, kv)
	obj.SetLabels(labels)
}
