package dryrun

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/dryrun/crd"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
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
	// CustomResources, for a CustomResourceDefinition pruning deletes, is how many
	// custom resources of it the cluster holds (they are deleted with it); negative
	// when they could not be counted, and then at least -CustomResources-1.
	CustomResources *int64
	// Same is set, on a throwaway server, for an object the change leaves as it is:
	// rendered to the same bytes by the same target on both refs, and depending on
	// nothing the change touches. Nothing else writes to that server, so the object
	// is unchanged without a request: it is neither loaded nor sent (Live and Merged
	// stay nil).
	Same bool

	// pendingCRD is set when the object's kind is defined by a CRD of the change itself.
	pendingCRD *crd.CRD
	pendingVer *crd.Version
	// list is the LIST that reads the live copy for the first attempt (planLists).
	list *kube.List
}

// Message is a human message with a stable machine-readable reason.
type Message struct {
	Reason  reason.Reason `json:"reason"`
	Message string        `json:"message"`
}

// problem is a kube.Problem as the Message of a result.
func problem(p kube.Problem) *Message {
	m := Message(p)
	return &m
}

// requestError explains a failed request about r (verb get, patch, apply, create or
// delete): kube.Describe, as r's message.
func requestError(c *kube.Clients, verb string, r *Result, err error) *Message {
	return problem(kube.Describe(c, verb, r.ID, err))
}

// mappingError explains why id's kind could not be mapped to a resource.
func mappingError(id object.ID, err error) *Message {
	return problem(kube.MappingProblem(id, err))
}

// LastAppliedAnnotation is where client-side apply keeps what it applied last
// (applier.LastAppliedAnnotation), for what reads results.
const LastAppliedAnnotation = applier.LastAppliedAnnotation

// Sendable is r's object as opts.Applier sends it over nothing live: the rendered
// object with its namespace defaulted and what the applier adds (Prepare). Loading a
// server drift owns takes it to leave the object as the applier would
// (applier.Applier.Leaves).
func Sendable(r *Result, opts Options) (applier.Object, error) {
	obj, _, err := prepared(r, nil, opts)
	if err != nil {
		return applier.Object{}, err
	}
	return applier.Object{ID: r.ID, Obj: obj, Owner: opts.Owner, Manager: opts.FieldManager, Notes: notes(r.Object)}, nil
}
