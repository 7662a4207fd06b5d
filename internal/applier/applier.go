package applier

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// Applier is one real applier as drift predicts it. It is an interface, one package
// per applier, rather than a table of settings: what differs between appliers is
// behaviour (Flux's normalization and metadata cleanup, Argo CD's tracking and RBAC
// reconcile, Helm's three-way patch from the release), and each package holds the
// code that reproduces its applier, read from that applier's source. What is plain
// data (how objects are sent, what the rest of a run needs to know) is returned as a
// value; Base gives the appliers that have no step of their own its default.
type Applier interface {
	// Name is what drift.yaml's applier: and --applier call it.
	Name() Name
	// Doc is one line for --help and docs.
	Doc() string
	// Sending is how the applier sends objects.
	Sending() Sending
	// Traits are what plan and preview need to know of the applier.
	Traits() Traits
	// Owner is what the applier knows a target's objects by, from what the target
	// declares.
	Owner(d Declared) Owner
	// For returns the applier that applies obj instead of this one (Argo CD's
	// per-resource sync option ServerSideApply), or nil: this one.
	For(obj *unstructured.Unstructured) Applier
	// Prepare adds to obj what the applier adds before sending it (labels, tracking
	// annotations), given its live copy (nil when absent). It may return why the
	// applier sends nothing for it: the live object is then the prediction.
	Prepare(obj, live *unstructured.Unstructured, o Owner) (skip string, err error)
	// Send sends, with dryRun=All through s, what the applier sends for one prepared
	// object, and returns the server's answer. An error of type *Refused fails the
	// object with its reason; *Final fails it with the server's answer; any other
	// error is the server's answer to a request, which the engine judges (a change
	// since the read is read again).
	Send(ctx context.Context, s Server, o Object) (Sent, error)
	// After edits the server's answer as the applier's own steps after the apply do
	// (removing managers or annotations).
	After(merged, live *unstructured.Unstructured, o Owner)
	// Leaves is a prepared object as the applier leaves it in the cluster, to load a
	// server drift owns (an ephemeral one) as if the applier had applied it.
	Leaves(o Object) (Left, error)
}

// Method is how an applier sends objects.
type Method int

const (
	// ServerSide is a server-side apply PATCH.
	ServerSide Method = iota
	// ClientSide is kubectl apply's three-way patch from the last-applied annotation.
	ClientSide
	// HelmUpgrade is helm upgrade's three-way patch from the previous release.
	HelmUpgrade
)

// Operation is the managedFields operation the method's writes are recorded with.
func (m Method) Operation() metav1.ManagedFieldsOperationType {
	if m == ServerSide {
		return metav1.ManagedFieldsOperationApply
	}
	return metav1.ManagedFieldsOperationUpdate
}

// Sending is how an applier sends objects.
type Sending struct {
	Method Method
	// Manager is the field manager the applier writes as; ManagerFixed says it always
	// does (a controller), else a target's fieldManager (kubectl's --field-manager)
	// replaces it.
	Manager      string
	ManagerFixed bool
	// Force means the applier takes fields over from other managers without failing.
	Force bool
	// FieldValidation is the fieldValidation the applier sends; "" is Strict, as
	// kubectl apply's default --validate=strict.
	FieldValidation string
	// Managers are the field managers whose entries on a live object show that this
	// applier wrote it (the applier-mismatch warning).
	Managers []string
	// Migration, on an object applied client-side before, moves the client-side
	// managers' fields to the applier before its server-side apply; nil: it does not.
	Migration Migration
}

// ManagerFor is the field manager a run sends as when it asks for requested ("": the
// applier's own).
func (s Sending) ManagerFor(requested string) string {
	if s.ManagerFixed || requested == "" {
		return s.Manager
	}
	return requested
}

// Validation is the fieldValidation the applier sends.
func (s Sending) Validation() string {
	if s.FieldValidation == "" {
		return metav1.FieldValidationStrict
	}
	return s.FieldValidation
}

// Traits are what plan and preview need to know of an applier.
type Traits struct {
	// Record is the record of what it applied that the applier's controller keeps,
	// which prune reads as the target's inventory (NoRecord: none).
	Record Record
	// UpgradesRelease says the applier upgrades a Helm release: its deployed revision
	// is read, the chart rendered as its next revision (Helm's lookup reading the
	// cluster where the trusted side grants it), and what the release drops deleted.
	UpgradesRelease bool
	// BuildsAsFlux says the applier builds a target's path as Flux's
	// kustomize-controller does: a directory without a kustomization file over one
	// generated as Flux generates it, and no kustomize load restrictions.
	BuildsAsFlux bool
}

// Record is a controller's own record of what it applied.
type Record string

const (
	// NoRecord: the applier keeps none that prune reads.
	NoRecord Record = ""
	// FluxInventory is a Flux Kustomization's status.inventory.
	FluxInventory Record = "flux"
	// ArgoCDResources is an Argo CD Application's status.resources.
	ArgoCDResources Record = "argocd"
)

// Owner is what the applier knows the objects by: the Flux Kustomization, the
// Argo CD Application, or the Helm release.
type Owner struct {
	// Name and Namespace of the Kustomization, Application or release.
	Name, Namespace string
	// Tracking is Argo CD's resource tracking method: annotation (Argo CD 3's
	// default), label, or annotation+label.
	Tracking string
	// InstanceLabel is the label key of label tracking (app.kubernetes.io/instance).
	InstanceLabel string
	// Destination is the namespace objects that name none are applied in (Argo CD's
	// destination namespace, which cluster-scoped objects' tracking ids carry);
	// empty, it is the run's namespace.
	Destination string
}

// Declared is what a target says about who applies it, as drift.yaml or discovery
// writes it, each applier reading its own part (Applier.Owner).
type Declared struct {
	// Target is the target's name: the default name of its Kustomization or
	// Application.
	Target string
	// Kustomization is drift.yaml's flux: (name, namespace), as written.
	Kustomization Owner
	// Application is drift.yaml's argocd: (application, namespace, tracking,
	// instanceLabel), as written.
	Application Owner
	// Release is the Helm release the target's chart renders (name, namespace).
	Release Owner
}

// Object is one object an applier sends.
type Object struct {
	// ID is the object's identity, its namespace defaulted.
	ID object.ID
	// Obj is the object as the applier sends it (Prepare done); Live its live copy,
	// nil when absent.
	Obj, Live *unstructured.Unstructured
	// Owner is what the applier knows the object by.
	Owner Owner
	// Manager is the field manager the run sends as; Force says it forces conflicts
	// from the start (--force-conflicts, or an applier that always does).
	Manager string
	Force   bool
	// Notes are the reasons of what rendering noted about the object (a Helm hook, a
	// CRD of a chart's crds/ directory).
	Notes []reason.Reason
}

// Sent is an applier's answer for one object.
type Sent struct {
	// Merged is the server's answer: the object as the apply leaves it.
	Merged *unstructured.Unstructured
	// Untouched says why the applier sends nothing for the object ("" when it
	// sends): the live object is then the prediction.
	Untouched string
	// Warnings are what the user should know of the apply (a conflict forced, a
	// migration).
	Warnings []Warning
}

// Warning is something the user should know that does not stop the preview.
type Warning struct {
	Reason  reason.Reason
	Message string
}

// Left is an object as an applier leaves it in the cluster.
type Left struct {
	Obj *unstructured.Unstructured
	// Created says the applier created it (a client-side applier: an Update in
	// managedFields, as its manager); else it applied it server-side, forced.
	Created bool
}

// Server is what the engine lets an applier send for one object: dry-run requests
// (dryRun=All) for the object's resource, as the run's field manager, each bounded
// by the request timeout and retried by drift's policy (kube.Retry).
type Server interface {
	// Apply sends body as a server-side apply of the object, forced or not, with the
	// applier's fieldValidation.
	Apply(ctx context.Context, body []byte, force bool) (*unstructured.Unstructured, error)
	// Create creates obj; validation is the fieldValidation sent ("": none).
	Create(ctx context.Context, obj *unstructured.Unstructured, validation string) (*unstructured.Unstructured, error)
	// Patch patches the object; validation is the fieldValidation sent ("": none).
	Patch(ctx context.Context, pt types.PatchType, patch []byte, validation string) (*unstructured.Unstructured, error)
	// Update updates the object to obj.
	Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Refused is what an applier answers for an object it cannot send: the object fails
// with Reason, and is not sent.
type Refused struct {
	Reason  reason.Reason
	Message string
}

func (r *Refused) Error() string { return r.Message }

// Refuse is a Refused error of reason why.
func Refuse(why reason.Reason, format string, args ...any) error {
	return &Refused{Reason: why, Message: fmt.Sprintf(format, args...)}
}

// Final is a server's answer that ends an object's preview as it is (a field manager
// conflict the applier does not force): the object is not read again.
type Final struct{ Err error }

func (f *Final) Error() string { return f.Err.Error() }
func (f *Final) Unwrap() error { return f.Err }

// Base is the default of every step an applier may not have: no owner, no traits,
// nothing added before or done after the apply, the object left as sent. Appliers
// embed it.
type Base struct{}

// Traits: none.
func (Base) Traits() Traits { return Traits{} }

// Owner: none.
func (Base) Owner(Declared) Owner { return Owner{} }

// For: the applier itself applies every object.
func (Base) For(*unstructured.Unstructured) Applier { return nil }

// Prepare adds nothing.
func (Base) Prepare(_, _ *unstructured.Unstructured, _ Owner) (string, error) { return "", nil }

// After does nothing.
func (Base) After(_, _ *unstructured.Unstructured, _ Owner) {}

// Leaves the object as it is sent.
func (Base) Leaves(o Object) (Left, error) { return Left{Obj: o.Obj}, nil }
