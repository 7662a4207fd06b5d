// Package render turns a snapshot's files into Kubernetes objects: the renderers
// (plain, kustomize, Helm, Flux Operator ResourceSets), each object keeping its
// source file and document index. A file or document that cannot be read becomes a
// Failure beside the other objects, never an abort of the whole run. A run renders
// through its render cache (render/rendercache), each target in a render worker
// under Limits (render/worker, whose wire format carries requests and answers), so a
// renderer that crashes or exhausts them fails its own target only.
package render
