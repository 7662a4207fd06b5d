package applier

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Name is an applier's name as drift.yaml's applier: and --applier give it. Names
// from outside drift are read by ParseName (or FromApplyMode), the one place they
// are checked; the constants name them in code.
type Name string

// The appliers drift predicts.
const (
	// Kubectl is kubectl apply, client-side.
	Kubectl Name = "kubectl"
	// KubectlServerSide is kubectl apply --server-side.
	KubectlServerSide Name = "kubectl-server-side"
	// Flux is Flux's kustomize-controller.
	Flux Name = "flux"
	// ArgoCD is Argo CD's sync, client-side (its default).
	ArgoCD Name = "argocd"
	// ArgoCDServerSide is Argo CD's sync with ServerSideApply=true.
	ArgoCDServerSide Name = "argocd-server-side"
	// Helm is helm upgrade (or install).
	Helm Name = "helm"
)

// Default is the applier drift predicts when none is named.
const Default = KubectlServerSide

// names are the appliers, sorted.
var names = []Name{ArgoCD, ArgoCDServerSide, Flux, Helm, Kubectl, KubectlServerSide}

// Names lists the appliers' names, sorted.
func Names() []Name { return slices.Clone(names) }

// NameList is Names joined with ", ", for help and messages.
func NameList() string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// ParseName reads an applier's name: one of Names, exactly.
func ParseName(s string) (Name, error) {
	if n := Name(s); slices.Contains(names, n) {
		return n, nil
	}
	return "", fmt.Errorf("%q is not one of %s", s, NameList())
}

// FromApplyMode reads the old apply modes, applyMode in drift.yaml and --apply-mode:
// server is kubectl-server-side, client is kubectl.
func FromApplyMode(mode string) (Name, bool) {
	switch mode {
	case "server":
		return KubectlServerSide, true
	case "client":
		return Kubectl, true
	}
	return "", false
}

// OrDefault is n, or Default when n is empty.
func (n Name) OrDefault() Name { return cmp.Or(n, Default) }
