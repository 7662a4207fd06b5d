// Package appliers builds the registry of every applier drift predicts, in one
// function that lists their constructors.
package appliers

import (
	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/argocd"
	"github.com/drift-gitops/drift/internal/applier/flux"
	"github.com/drift-gitops/drift/internal/applier/helm"
	"github.com/drift-gitops/drift/internal/applier/kubectl"
	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
)

// All is the registry of every applier: what a run decides targets' appliers from
// (plan) and recognises other appliers' field managers by (the applier-mismatch
// warning).
func All() *applier.Registry {
	return applier.NewRegistry(
		kubectl.New(),
		kubectlssa.New(),
		flux.New(),
		argocd.New(),
		argocd.NewServerSide(),
		helm.New(),
	)
}
