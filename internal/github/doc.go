// Package github is drift's client of GitHub's REST API: the pull request's drift
// comment kept up to date, a check run (or a commit status), the drift issue, and the
// Actions environment that says where they go. What to publish, and how to fall
// back, is internal/publish's.
package github
