// Package ephemeral starts a throwaway kube-apiserver + etcd on loopback, in a
// temporary directory removed when it stops: a real API server that validates and
// defaults objects, for previews without a cluster. The processes die with drift
// however it ends, and a killed drift's directory is removed at the next start. It
// loads the server too (Load, Seed): each object as its applier leaves it, and the
// marks and lists the targets' inventories record (internal/inventory).
//
// On Windows, controller-runtime v0.25.2's envtest does not build (its process
// package declares signalProcess twice there): the server is not available, and
// Start says so (server_windows.go).
package ephemeral
