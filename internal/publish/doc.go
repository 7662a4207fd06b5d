// Package publish puts a finished report where GitHub shows it: the job summary, the
// pull request's comment and check run, the drift issue, the step outputs, and files
// beside them (a JSON copy, the comment as a file). It decides what to publish and
// how to fall back; internal/github only speaks GitHub's REST API.
package publish
