// Package kubectl is kubectl apply, client-side: the three-way patch from the
// last-applied-configuration annotation, as kubectl-client-side-apply (kubectl's own
// code computes the patch, internal/applier/clientside).
package kubectl

import (
	"context"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/clientside"
)

type kubectl struct{ applier.Base }

// New returns the kubectl applier.
func New() applier.Applier { return kubectl{} }

func (kubectl) Name() applier.Name { return applier.Kubectl }

func (kubectl) Doc() string {
	return "kubectl apply (client-side, the three-way patch from last-applied-configuration)"
}

func (kubectl) Sending() applier.Sending {
	return applier.Sending{
		Method:   applier.ClientSide,
		Manager:  applier.ClientSideFieldManager,
		Managers: []string{applier.ClientSideFieldManager, applier.BeforeFirstApply},
	}
}

func (k kubectl) Send(ctx context.Context, s applier.Server, o applier.Object) (applier.Sent, error) {
	return clientside.Send(ctx, s, o, k.Name(), k.Sending().Validation(), nil)
}

// Leaves the object created with its last-applied configuration, as kubectl's
// first apply creates it.
func (kubectl) Leaves(o applier.Object) (applier.Left, error) { return clientside.Leaves(o) }
