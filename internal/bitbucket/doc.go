// Package bitbucket speaks Bitbucket Cloud's REST API 2.0 and Bitbucket Data Center's
// REST API 1.0 for internal/publish: the pull request's drift comment, a build status
// on the commit, the drift issue (Cloud, where the repository's issue tracker is on),
// and what a Bitbucket Pipelines step's variables say about where they go. The API
// URL chooses the dialect. It implements forge.Site through Kind; what is published,
// and which comment is drift's, is decided in internal/publish and forge.
//
// It uses net/http, not github.com/ktrysmt/go-bitbucket: that library answers
// interface{} maps rather than types, takes no context, follows a paginated answer's
// next URL wherever it points, and knows Data Center only for a few pull request
// calls; the handful of resources drift needs are typed here instead.
package bitbucket
