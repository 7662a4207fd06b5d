// Package discover reads the Argo CD and Flux objects a repository holds and turns
// each into what drift previews: an Argo CD Application (and the Applications an
// ApplicationSet generates) or a Flux Kustomization or HelmRelease becomes a target
// that renders what its controller would render, from this repository, into the
// namespace and onto the cluster the object names, applied by that controller's
// applier.
//
// Discovery starts from the objects written in the repository's YAML files and
// follows what they render: an Application whose source renders Applications
// (app-of-apps), a Kustomization whose path renders Kustomizations and HelmReleases,
// to a bounded depth. The same object reached twice with the same definition is one
// target; reached with two definitions for one cluster (a repository with a
// directory per cluster) it is an error that says how to choose.
//
// Nothing here reaches a cluster or the network: sources of other repositories,
// revisions other than the one previewed, and generators that read a cluster or an
// API are reported as skipped, with why.
package discover
