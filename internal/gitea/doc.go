// Package gitea speaks Gitea's REST API v1 (through Gitea's Go SDK) for
// internal/publish, on Gitea and on Forgejo, which keeps the same API: the pull
// request's drift comment, a commit status on the commit the workflow runs, the drift
// issue, and what a Gitea Actions or Forgejo Actions job's environment says about
// where they go. It implements forge.Site and exports Kind; what is published, and
// which comment is drift's, is decided in internal/publish and internal/publish/forge.
package gitea
