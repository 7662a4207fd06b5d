package azure

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Error is an Azure DevOps failure explained; its text never holds the token.
type Error struct {
	Code int
	msg  string
}

func (e *Error) Error() string { return e.msg }

// StatusCode returns the HTTP status of an Azure DevOps error (0 when none). The
// library answers a refusal with a WrappedError, as a value or a pointer.
func StatusCode(err error) int {
	var de *Error
	if errors.As(err, &de) {
		return de.Code
	}
	var wp *azuredevops.WrappedError
	if errors.As(err, &wp) && wp != nil && wp.StatusCode != nil {
		return *wp.StatusCode
	}
	var wv azuredevops.WrappedError
	if errors.As(err, &wv) && wv.StatusCode != nil {
		return *wv.StatusCode
	}
	return 0
}

// TooLong says whether Azure DevOps refused a comment for its size: a 400 saying
// "A discussion comment cannot be longer than 150000 characters", or a 413 from the
// request size limit.
func TooLong(err error) bool {
	switch StatusCode(err) {
	case http.StatusRequestEntityTooLarge:
		return true
	case http.StatusBadRequest:
		return strings.Contains(err.Error(), "cannot be longer than")
	}
	return false
}

// explain turns an Azure DevOps error into what to do, with the token scrubbed from
// whatever the server echoed.
func (s *Site) explain(what string, err error) error {
	if s.refused != nil {
		refused := s.refused
		s.refused = nil
		return s.scrubbed(0, fmt.Sprintf("failed to %s: %v", what, refused))
	}
	code := StatusCode(err)
	var msg string
	switch {
	case code == http.StatusUnauthorized:
		msg = fmt.Sprintf("Azure DevOps refused the token to %s (401): it is wrong, expired or revoked, or the step does not map System.AccessToken into its env (SYSTEM_ACCESSTOKEN: $(System.AccessToken)); a personal access token needs the Code (read and write) scope, and Work Items (read and write) for detection (DRIFT_AZURE_TOKEN, --azure-token): %v", what, err)
	case code == http.StatusForbidden:
		msg = fmt.Sprintf("Azure DevOps refused to %s (403): the identity lacks the permission; for System.AccessToken grant the project's build service (\"%s Build Service (organization)\") \"Contribute to pull requests\" on the repository (Project settings, Repositories, Security), and mind that a pull request from a fork gets a read-only token unless the pipeline allows more; the report is still in the run's artifacts: %v", what, s.project, err)
	case code == http.StatusNotFound:
		msg = fmt.Sprintf("Azure DevOps could not %s (404): check the organization (SYSTEM_COLLECTIONURI), the project and repository (%s/%s) and the pull request (%d), and that the identity can read them; a token limited to the pipeline's project cannot see another project's repository: %v", what, s.project, s.repository, s.ci.PR, err)
	case code == http.StatusConflict:
		msg = fmt.Sprintf("Azure DevOps could not %s (409, a conflict): %v", what, err)
	case code == http.StatusRequestEntityTooLarge:
		msg = fmt.Sprintf("Azure DevOps refused to %s (413): the request is larger than it allows: %v", what, err)
	case code == http.StatusBadRequest:
		msg = fmt.Sprintf("Azure DevOps rejected the request to %s (400): %v", what, err)
	case code == http.StatusTooManyRequests:
		msg = fmt.Sprintf("Azure DevOps' rate limit (429) stopped drift after %d tries to %s; run again later: %v", forge.MaxTries, what, err)
	case code >= 500:
		msg = fmt.Sprintf("Azure DevOps failed to %s (%d, a server error; GET and PATCH were tried %d times): %v", what, code, forge.MaxTries, err)
	default:
		msg = fmt.Sprintf("failed to %s on Azure DevOps: %v", what, err)
	}
	return s.scrubbed(code, msg)
}

// explainBoards is explain for Azure Boards, which a project can turn off and a job
// token may not be let into: detection then says so, and that the run's artifact
// and status still carry the report.
func (s *Site) explainBoards(what string, err error) error {
	if s.refused != nil {
		return s.explain(what, err)
	}
	code := StatusCode(err)
	switch code {
	case http.StatusNotFound, http.StatusForbidden:
		return s.scrubbed(code, fmt.Sprintf("Azure Boards refused to %s (%d): Boards is turned off for the project %q (Project settings, Overview, Azure DevOps services), or the identity may not read and edit work items "+
			"(for System.AccessToken, allow the project's build service \"View work items in this node\" and \"Edit work items in this node\" on the area path, and \"Create tag definition\" for the drift tag; "+
			"a personal access token needs the Work Items (read and write) scope). Without Boards, detection's report is in the run's artifact and its result in the status; "+
			"drop --azure-issue to stop asking (docs/azure-devops.md): %v", what, code, s.project, err))
	}
	return s.explain(what, err)
}

// scrubbed is an Error of msg with the token scrubbed from whatever the server
// echoed, in clear or as the Basic credential that carried it.
func (s *Site) scrubbed(code int, msg string) error {
	if t := s.ci.Token; t != "" {
		msg = strings.ReplaceAll(msg, t, "***")
		if a := authorization(t); a != nil {
			h := http.Header{}
			a(h)
			_, cred, _ := strings.Cut(h.Get("Authorization"), " ")
			msg = strings.ReplaceAll(msg, cred, "***")
		}
	}
	return &Error{Code: code, msg: msg}
}
