// Package applier is what drift knows of the tools that apply a repository for real
// (kubectl, kubectl --server-side, Flux, Argo CD, Helm): each one's typed Name, the
// Applier interface every one of them implements in a package of its own
// (internal/applier/kubectl, kubectlssa, flux, argocd, helm), and the Registry a run
// builds of them once (internal/applier/appliers). Plan decides each target's
// Applier; the dry-run engine sends each object through it; preview asks it what it
// needs (the owner of the objects, the controller's record prune reads, whether a
// Helm release is read).
package applier
