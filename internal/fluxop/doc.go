// Package fluxop previews what the Flux Operator (controlplaneio-fluxcd/flux-operator)
// makes from objects found in a repository, as its own code makes them:
//
//   - SyncObjects: the Flux source (GitRepository, OCIRepository or Bucket) and the
//     root Flux Kustomization that a FluxInstance's spec.sync makes, with the
//     labels, annotations, profile patches and spec.kustomize.patches the operator
//     applies to them (internal/builder Build and the FluxInstance controller).
//   - ExpandResourceSet: the objects a ResourceSet renders from its in-line inputs
//     and its Static ResourceSetInputProviders (internal/inputs and
//     internal/builder BuildResourceSetFromSpec): the << >> Go templates with
//     slim-sprig's hermetic functions, slugify, toYaml and inputs, the Flatten and
//     Permute input strategies, the per-input id, deduplication, the
//     fluxcd.controlplane.io/reconcile: disabled exclusion, steps, the owner labels
//     and spec.commonMetadata.
//
// It is pure: no Kubernetes API server, no network, no programs run. Inputs that
// would come from an API (GitHub pull requests, OCI tags, …) are reported as
// skipped. Every input-driven loop checks the context and the number of objects
// is bounded, so that a hostile ResourceSet cannot run away.
package fluxop
