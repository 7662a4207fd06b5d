package main

import (
	"io"
	"net/http"
	"os"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/report"
)

// newScrubber starts the run's scrubber with the credentials drift is handed; the
// report adds every Secret and masked value when it is built, and each cluster its
// own credentials when it is connected.
func (o *diffOptions) newScrubber() *report.Scrubber {
	s := report.NewScrubber()
	s.AddCredential(o.github.Token)
	// The variables of a GitHub Actions job that hold tokens.
	for _, name := range []string{"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"} {
		s.AddCredential(o.getenv(name))
	}
	if o.kube.BearerToken != nil {
		s.AddCredential(*o.kube.BearerToken)
	}
	if o.kube.Password != nil {
		s.AddCredential(*o.kube.Password)
	}
	return s
}

// maxCredentialFile bounds what is read of a token or key file for scrubbing.
const maxCredentialFile = 64 << 10

// kubeCredentials are the secrets a cluster's client configuration holds: bearer
// token (inline or its file), password, client key, and an auth provider's tokens.
// Tokens an exec plugin returns are known only from the requests (bearerSeen).
func kubeCredentials(cfg *rest.Config) []string {
	out := []string{cfg.BearerToken, cfg.Password, string(cfg.KeyData)}
	for _, f := range []string{cfg.BearerTokenFile, cfg.KeyFile} {
		if f == "" {
			continue
		}
		if file, err := os.Open(f); err == nil {
			b, _ := io.ReadAll(io.LimitReader(file, maxCredentialFile))
			_ = file.Close()
			out = append(out, string(b))
		}
	}
	if cfg.AuthProvider != nil {
		for _, v := range cfg.AuthProvider.Config {
			out = append(out, v)
		}
	}
	return out
}

// scrubbedError is an error whose message is scrubbed; errors.As and errors.Is still
// see what it wraps (exit statuses, GitHub's answers).
type scrubbedError struct {
	err   error
	scrub *report.Scrubber
}

func (e scrubbedError) Error() string { return e.scrub.Scrub(e.err.Error()) }
func (e scrubbedError) Unwrap() error { return e.err }

// scrubError wraps err so that its message is scrubbed.
func (o *diffOptions) scrubError(err error) error {
	if err == nil || o.scrub == nil {
		return err
	}
	return scrubbedError{err: err, scrub: o.scrub}
}

// bearerSeen tells secret the bearer token of every request it passes on: client-go
// sets the header of an exec or auth-provider plugin's token outside drift's view, in
// a wrapper around this one.
type bearerSeen struct {
	next   http.RoundTripper
	secret func(...string)
}

func (b bearerSeen) RoundTrip(req *http.Request) (*http.Response, error) {
	if token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		b.secret(token)
	}
	return b.next.RoundTrip(req)
}
