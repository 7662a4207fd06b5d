package dryrun

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/dryrun/crd"
	"github.com/drift-gitops/drift/internal/render"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// Pending is what the change itself creates that objects may depend on: namespaces,
// and kinds defined by CustomResourceDefinitions. Objects that need them cannot be
// dry-run by the server until they exist; drift reports them as additions with a
// warning, checked against the rendered CRD's schema where there is one.
type Pending struct {
	Namespaces map[string]bool
	CRDs       map[schema.GroupKind]*crd.CRD
}

// PendingFrom collects the Namespaces and CRDs among rendered objects. A CRD that
// cannot be read is left out: its custom resources then fail as unknown kinds.
func PendingFrom(objs []render.Object) *Pending {
	p := &Pending{Namespaces: map[string]bool{}, CRDs: map[schema.GroupKind]*crd.CRD{}}
	for _, o := range objs {
		switch o.ID().GroupKind() {
		case object.NamespaceKind:
			p.Namespaces[o.Name()] = true
		case object.CRDKind:
			if c, kind, ok := crd.Parse(o.Get(), o.Where()); ok {
				p.CRDs[kind] = c
			}
		}
	}
	return p
}

// crdFor returns the pending CRD serving an object's kind and its version (nil
// when the CRD does not serve it), if the change defines it.
func (p *Pending) crdFor(gk schema.GroupKind, version string) (*crd.CRD, *crd.Version) {
	if p == nil {
		return nil, nil
	}
	c := p.CRDs[gk]
	if c == nil {
		return nil, nil
	}
	return c, c.Version(version)
}

func pendingCRWarning(id string, c *crd.CRD, checked bool) Message {
	how := "checked only against the CRD's schema in this change"
	if !checked {
		how = "not checked at all: the CRD in this change has no usable schema for this version"
	}
	return Message{Reason: reason.CRDPending, Message: fmt.Sprintf(
		"the cluster does not serve %s yet: its CustomResourceDefinition is created by this change (%s), so the server could not dry-run it; %s, and shown as written, without server defaults",
		id, c.Source, how)}
}

func pendingCRError(c *crd.CRD, problems []string) *Message {
	return &Message{Reason: reason.Invalid, Message: fmt.Sprintf(
		"does not pass the API server's checks of metadata or the schema of its CustomResourceDefinition in this change (%s): %s; the apply will fail",
		c.Source, strings.Join(problems, "; "))}
}
