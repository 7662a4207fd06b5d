// Package kubectlssa is kubectl apply --server-side: a server-side apply as kubectl
// (or the target's fieldManager), not forced unless --force-conflicts says so, and
// kubectl's move of client-side apply's fields to its own manager on an object
// applied client-side before (pkg/cmd/apply: saveLastApplyAnnotationIfNecessary,
// migrateToSSAIfNecessary).
package kubectlssa

import (
	"context"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/serverside"
)

type kubectlSSA struct{ applier.Base }

// New returns the kubectl-server-side applier.
func New() applier.Applier { return kubectlSSA{} }

func (kubectlSSA) Name() applier.Name { return applier.KubectlServerSide }

func (kubectlSSA) Doc() string {
	return "kubectl apply --server-side (field manager kubectl, or fieldManager)"
}

func (kubectlSSA) Sending() applier.Sending {
	return applier.Sending{
		Method:    applier.ServerSide,
		Manager:   applier.KubectlFieldManager,
		Managers:  []string{applier.KubectlFieldManager},
		Migration: applier.CSAMigration{LastApplied: "kubectl-last-applied"},
	}
}

func (k kubectlSSA) Send(ctx context.Context, s applier.Server, o applier.Object) (applier.Sent, error) {
	return serverside.Send(ctx, s, o, k.Name(), k.Sending().Migration)
}
