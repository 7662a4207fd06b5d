package gitea

import (
	"strings"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// MaxNoteBytes is the most drift writes in one comment, marker included. Gitea and
// Forgejo keep a comment's or an issue's body in a LONGTEXT column and check no
// length in the API, so the limit is what stands in front of them: a reverse proxy's
// body limit (nginx's client_max_body_size is 1 MiB unless set), which the JSON
// request, with Go's escaping of <, > and & as six bytes each, must stay under.
// 256 KiB of markdown does, even when a quarter of it is escaped; the whole report is
// among the run's artifacts.
const MaxNoteBytes = 256 << 10

// DriftLabel labels drift issues.
const DriftLabel = "drift"

// TokenVariables are the variables drift takes a token from, in order: one stored as
// a secret for drift (DRIFT_GITEA_TOKEN), then the Actions job token as a workflow
// passes it (GITEA_TOKEN on Gitea, FORGEJO_TOKEN on Forgejo, both also given as
// GITHUB_TOKEN).
var TokenVariables = []string{"DRIFT_GITEA_TOKEN", "GITEA_TOKEN", "FORGEJO_TOKEN", "GITHUB_TOKEN"}

// Secrets are the variables of Gitea's and Forgejo's runners that hold a credential:
// the tokens above, and the job token act_runner and forgejo-runner give the actions
// they run for the artifact and cache services (ACTIONS_RUNTIME_TOKEN), with the OIDC
// request token where the runner offers one.
var Secrets = []string{"DRIFT_GITEA_TOKEN", "GITEA_TOKEN", "FORGEJO_TOKEN", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}

// Kind is Gitea (and Forgejo) as internal/publish drives it.
var Kind = &forge.Kind{
	Name:           "Gitea",
	Flag:           "gitea",
	Note:           "comment",
	Review:         "pull request",
	Tracked:        "issue",
	MaxNoteBytes:   MaxNoteBytes,
	TokenVariables: TokenVariables,
	Secrets:        Secrets,
	InCI:           InCI,
	FromEnv:        FromEnv,
	Open:           Open,
	Flavour:        Flavour,
	StatusCode:     StatusCode,
	TooLong:        TooLong,
	Docs:           "docs/gitea.md",
}

// InCI says whether getenv is a Gitea Actions job's (act_runner sets GITEA_ACTIONS)
// or a Forgejo Actions job's (forgejo-runner sets FORGEJO_ACTIONS). Both set
// GITHUB_ACTIONS=true too, so this is asked before GitHub's.
func InCI(getenv func(string) string) bool {
	return getenv("GITEA_ACTIONS") == "true" || getenv("FORGEJO_ACTIONS") == "true"
}

// cut keeps at most n runes of s, ending with "..." when it cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-3])) + "..."
}
