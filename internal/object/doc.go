// Package object holds the one identity type every stage of drift uses to name a
// Kubernetes object: group, version, kind, namespace and name.
package object
