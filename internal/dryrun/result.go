package dryrun

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// Result is what the cluster said about one rendered object.
type Result struct {
	// Object is the rendered object, as sent.
	Object render.Object
	// ID is the object's identity with its namespace defaulted.
	ID object.ID
	// Live is the object as it is in the cluster; nil when it does not exist.
	Live *unstructured.Unstructured
	// Merged is the server's answer to the dry-run apply: the object as it would be.
	Merged *unstructured.Unstructured
	// Warnings are things the user should know that do not stop the preview.
	Warnings []Message
	// Err is set when the preview of this object failed.
	Err *Message
	// Inventory names the inventory that lists a prune candidate ("apply-config
	// ConfigMap shop/inventory"); Merged is then nil: the object would be deleted.
	Inventory string

	// pendingCRD is set when the object's kind is defined by a CRD of the change itself.
	pendingCRD *PendingCRD
	pendingVer *crdVersion
}

// Message is a human message with a stable machine-readable reason.
type Message struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Reasons carried by errors and warnings.
const (
	ReasonConflict    = "conflict"
	ReasonForbidden   = "forbidden"
	ReasonInvalid     = "invalid"
	ReasonNotFound    = "not-found"
	ReasonUnknownKind = "unknown-kind"
	ReasonTimeout     = "timeout"
	ReasonUnavailable = "unavailable"
	ReasonDuplicate   = "duplicate"
	ReasonChanged     = "changed-during-diff"
	ReasonNotChecked  = "not-checked"
	ReasonServer      = "server-warning"
	// ReasonNamespacePending and ReasonCRDPending: the object depends on a namespace or
	// a CRD the same change creates, so the server could not dry-run it.
	ReasonNamespacePending = "namespace-pending"
	ReasonCRDPending       = "crd-pending"
	// ReasonCRDChanged: the object's CRD is modified by the same change, so it was
	// previewed locally against the CRD as the change makes it.
	ReasonCRDChanged = "crd-changed"
	// ReasonImmutable: the change sets a field the server does not let change.
	ReasonImmutable = "immutable"
	// ReasonNamespaceTerminating: the object's namespace is being deleted, and the
	// server takes no new objects in it.
	ReasonNamespaceTerminating = "namespace-terminating"
	// ReasonAdmissionDenied: a built-in admission plugin (not RBAC, not a webhook)
	// refuses the object, such as ServiceAccount for a missing service account.
	ReasonAdmissionDenied = "admission-denied"
	// Admission webhooks: unreachable or too slow under failurePolicy Fail, denying,
	// or not supporting dry run.
	ReasonWebhookUnavailable = "webhook-unavailable"
	ReasonWebhookDenied      = "webhook-denied"
	ReasonDryRunUnsupported  = "dry-run-unsupported"
	// ReasonAggregatedAPI: the kind is served by an aggregated API server, which is not
	// trusted with dry runs unless the target allows it.
	ReasonAggregatedAPI = "aggregated-api"
	// ReasonGenerateName: the object has only generateName and is created anew by
	// every apply.
	ReasonGenerateName = "generate-name"
	// ReasonCSAMigration: the object was applied client-side; the server-side applier
	// takes its fields over.
	ReasonCSAMigration = "client-side-apply-migration"
	// ReasonNotApplied marks an object the applier sends nothing for (a Flux ssa
	// annotation, a CRD Helm never updates).
	ReasonNotApplied = "not-applied"
	// ReasonApplierMismatch marks a live object another applier than the target's
	// profile wrote.
	ReasonApplierMismatch = "applier-mismatch"
	ReasonError           = "error"
)
