// Package render turns a snapshot's files into Kubernetes objects. Each object keeps
// its source file and document index. A file or document that cannot be read becomes
// a Failure beside the other objects, never an abort of the whole run.
package render
