// Package render turns a snapshot's files into Kubernetes objects. Each object keeps
// its source file and document index. A file or document that cannot be read becomes
// a Failure beside the other objects, never an abort of the whole run. drift renders
// each target in a render worker (Isolated, WorkerMain) under Limits, so a renderer
// that crashes or exhausts them fails its own target only.
package render
