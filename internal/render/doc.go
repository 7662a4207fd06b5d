// Package render turns a snapshot's files into Kubernetes objects. Each object keeps
// its source file and document index. A file or document that cannot be read becomes
// a Failure beside the other objects, never an abort of the whole run. drift renders
// each target in a render worker under Limits (a Cache's Worker: render/worker), so a
// renderer that crashes or exhausts them fails its own target only; requests and
// answers cross in this package's wire format (wire.go), which the rendering store
// keeps too.
package render
