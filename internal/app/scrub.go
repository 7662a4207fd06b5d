package app

import (
	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/scrub"
)

// newScrubber starts the run's scrubber with the credentials drift is handed; the
// run's entry builder adds every Secret and masked value of the report, and each
// cluster its own credentials when it is connected.
func (o *Run) newScrubber() *scrub.Scrubber {
	s := scrub.New()
	s.AddCredential(o.GitHub.Token)
	// The variables of a GitHub Actions job that hold tokens.
	for _, name := range []string{"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"} {
		s.AddCredential(o.cfg.Getenv(name))
	}
	s.AddCredential(o.GitLab.Token)
	for _, name := range gitlabCredentials {
		s.AddCredential(o.cfg.Getenv(name))
	}
	for _, site := range o.Sites {
		s.AddCredential(site.CI.Token)
	}
	for _, k := range publish.Kinds {
		for _, name := range append(append([]string(nil), k.TokenVariables...), k.Secrets...) {
			s.AddCredential(o.cfg.Getenv(name))
		}
	}
	if o.cfg.Kube.BearerToken != nil {
		s.AddCredential(*o.cfg.Kube.BearerToken)
	}
	if o.cfg.Kube.Password != nil {
		s.AddCredential(*o.cfg.Kube.Password)
	}
	return s
}

// scrubbedError is an error whose message is scrubbed; errors.As and errors.Is still
// see what it wraps (exit statuses, GitHub's answers).
type scrubbedError struct {
	err   error
	scrub *scrub.Scrubber
}

func (e scrubbedError) Error() string { return e.scrub.Scrub(e.err.Error()) }
func (e scrubbedError) Unwrap() error { return e.err }
