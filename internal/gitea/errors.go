package gitea

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Error is a Gitea failure explained; its text never holds the token.
type Error struct {
	Code int
	msg  string
}

func (e *Error) Error() string { return e.msg }

// StatusCode returns the HTTP status of a Gitea error (0 when there is none).
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// TooLong says whether Gitea, or what stands in front of it, refused a comment for
// its size: 413 (a proxy's body limit), or a 422 that says the content is too long.
func TooLong(err error) bool {
	switch StatusCode(err) {
	case http.StatusRequestEntityTooLarge:
		return true
	case http.StatusUnprocessableEntity:
		return strings.Contains(strings.ToLower(err.Error()), "too long")
	}
	return false
}

// code is the HTTP status of an SDK answer (0 when none came).
func code(resp *sdk.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

// explain turns a Gitea error into what to do, with the token scrubbed from whatever
// the server echoed. The SDK's errors hold Gitea's message, not its status: that
// comes from the answer.
func (s *Site) explain(what string, resp *sdk.Response, err error) error {
	c := code(resp)
	var msg string
	switch {
	case c == http.StatusUnauthorized:
		msg = fmt.Sprintf("Gitea refused the token to %s (401): it is wrong, expired or revoked; give an access token (DRIFT_GITEA_TOKEN, --gitea-token): %v", what, err)
	case c == http.StatusForbidden && strings.Contains(err.Error(), "required scope"):
		msg = fmt.Sprintf("Gitea refused to %s (403): the access token lacks a scope; drift needs write:issue, write:repository (for the commit status) and read:user (%s): %v", what, Kind.Docs, err)
	case c == http.StatusForbidden:
		msg = fmt.Sprintf("Gitea refused to %s (403): the token's user cannot write here; a pull request from a fork gets a read-only Actions token whatever the workflow asks, "+
			"and an instance or repository may restrict the job token (%s, \"Tokens\"); the report is still in the run's artifacts: %v", what, Kind.Docs, err)
	case c == http.StatusNotFound:
		msg = fmt.Sprintf("Gitea could not %s (404): check the repository (GITHUB_REPOSITORY, --gitea-repository) and the pull request's number, and that the token's user can read the repository: %v", what, err)
	case c == http.StatusRequestEntityTooLarge:
		msg = fmt.Sprintf("Gitea refused to %s (413): the request is larger than the instance, or a proxy in front of it, allows: %v", what, err)
	case c == http.StatusLocked:
		msg = fmt.Sprintf("Gitea refused to %s (423): the repository is archived: %v", what, err)
	case c == http.StatusBadRequest || c == http.StatusUnprocessableEntity:
		msg = fmt.Sprintf("Gitea rejected the request to %s (%d): %v", what, c, err)
	case c == http.StatusTooManyRequests:
		msg = fmt.Sprintf("Gitea's rate limit (429) stopped drift after %d tries to %s; run again later: %v", forge.MaxTries, what, err)
	case c >= 500:
		msg = fmt.Sprintf("Gitea failed to %s (%d, a server error; GET and PATCH were tried %d times): %v", what, c, forge.MaxTries, err)
	default:
		msg = fmt.Sprintf("failed to %s on Gitea: %v", what, err)
	}
	return s.scrubbed(c, msg)
}

// scrubbed is an Error of the message with the token scrubbed from whatever the
// server echoed.
func (s *Site) scrubbed(code int, msg string) error {
	if s.ci.Token != "" {
		msg = strings.ReplaceAll(msg, s.ci.Token, "***")
	}
	return &Error{Code: code, msg: msg}
}
