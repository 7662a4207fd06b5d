package discover

import (
	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// Kinds of the objects discovery reads.
const (
	KindApplication    = "Application"
	KindApplicationSet = "ApplicationSet"
	KindKustomization  = "Kustomization"
	KindHelmRelease    = "HelmRelease"
	// The Flux Operator's.
	KindFluxInstance = "FluxInstance"
	KindResourceSet  = "ResourceSet"
)

// Target is one Application, Kustomization or HelmRelease as drift previews it.
type Target struct {
	// Name identifies the target in reports and for --target: the object's kind,
	// namespace (left out for Argo CD's own) and name, "Application/guestbook",
	// "Kustomization/flux-system/apps".
	Name string
	// Kind, Namespace and ObjectName are the applier object's.
	Kind, Namespace, ObjectName string
	// From says where the object is defined: "apps/guestbook.yaml document 1", or
	// which target renders or generates it.
	From string
	// Parent is the target whose render holds the object ("" for one written in the
	// repository's files).
	Parent string
	// Specs are what to render, one per source (an Application may have several).
	Specs []render.Spec
	// DestNamespace is the default namespace of what is rendered ("" the cluster's).
	DestNamespace string
	// Cluster names the cluster: "" is the one drift runs against (Argo CD's
	// in-cluster destination, a Flux object without kubeConfig); otherwise the key
	// drift.yaml's clusters map gives a context for (an Argo CD destination's name or
	// server, a Flux kubeConfig Secret's name).
	Cluster string
	// Root is the cluster root the target belongs to in a fleet repository, whose
	// cluster roots sit side by side (Result.Roots): the directory a flux-system
	// Kustomization or a FluxInstance syncs; "" outside a fleet. A rooted target's
	// Name begins with its root ("clusters/staging/Kustomization/flux-system/apps").
	Root string
	// Applier is the applier that applies it, and FieldManager the manager it applies
	// with when the applier lets it choose ("": the applier's own).
	Applier      applier.Name
	FieldManager string
	ArgoCD       *config.ArgoCDTarget
	Flux         *config.FluxTarget
	// CreateNamespace is the namespace the applier creates before applying, when it
	// does not exist ("" none): Argo CD's CreateNamespace=true, a HelmRelease's
	// install.createNamespace.
	CreateNamespace string
	// Ignore are the object's own ignore rules (Argo CD's ignoreDifferences).
	Ignore []config.IgnoreRule
	// Prune says the applier deletes what it no longer renders.
	Prune bool
	// DependsOn names the targets that are applied first (Flux dependsOn).
	DependsOn []string
	// Unconfirmed are the repository paths a skipped target would read if its source
	// is this repository, which discovery cannot tell (its source is found nowhere,
	// or is an artifact that may be built from here): a change to them is not
	// previewed, and says so.
	Unconfirmed []string
	// Inputs are the repository files the definition itself reads (the object's file,
	// values and substitution sources), beside what its render reads.
	Inputs []string
	// Notes are what drift does differently from the applier, or leaves out.
	Notes []string
	// Skipped says why it is not previewed (another repository's source); Refused why
	// it cannot be (an error in the report).
	Skipped string
	Refused string
	// ByController says it is skipped because its controller does not apply it (a
	// suspended Kustomization, an ApplicationSet that generates nothing), not because
	// drift cannot preview it.
	ByController bool
	// RefusedReason is the reason of the error Refused is ("": reason.Refused).
	RefusedReason reason.Reason
	// definition is the object's spec as JSON, to tell one object reached twice from
	// two definitions of it.
	definition string
	// namespaceUnknown says it was skipped for having no namespace and no applier
	// drift knows of (withoutNamespace); the same object found under one replaces it.
	namespaceUnknown bool
}
