// Package gitlab speaks GitLab's REST API v4 (through GitLab's client-go) for
// internal/publish: the merge request's drift note, a commit status in the running
// pipeline, the drift issue, and what a GitLab CI job's environment says about where
// they go. It implements forge.Forge; what is published, and which note is drift's,
// is decided in internal/publish.
package gitlab
