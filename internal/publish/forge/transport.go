package forge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Origin is what a token is bound to: the scheme, host and port of a URL, with the
// scheme's default port filled in, so https://api.github.com and
// https://api.github.com:443 are one origin and http:// or another port is not.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// RefuseOtherOrigins is a forge client's redirect policy: a redirect within the API's
// origin api is followed (a renamed repository or project answers 301 with its new
// address on the same host), anywhere else it is refused. The token is added by the
// Transport, not by the request, so Go's own stripping of Authorization on a
// redirect to another host does not apply (and a header such as GitLab's
// PRIVATE-TOKEN is never stripped): refusing is what keeps it home. name is the
// forge's, check says what sets the API's URL.
func RefuseOtherOrigins(api, name, check string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if o := Origin(req.URL); o != api {
			return fmt.Errorf("%s's answer to %s %s redirects to %s, which is not the API at %s; drift does not follow redirects to other hosts, so the token is never sent there: check %s",
				name, via[0].Method, via[0].URL.Path, o, api, check)
		}
		return nil
	}
}

// How often and how long a Transport tries a request again.
const (
	MaxTries = 4
	MaxWait  = 90 * time.Second
)

// Transport authenticates the requests to the API's origin (and only those), and
// sends a request again when Retry says its answer is worth another try, after the
// wait Retry says: at most MaxWait each time, at most MaxTries tries. Sleep waits
// (injected, so that tests record the waits instead of sleeping).
type Transport struct {
	Next http.RoundTripper
	// Origin is the API's (Origin), the only one that hears a credential.
	Origin string
	// Credentials are the headers a token can be sent in: each is removed from every
	// request, whatever the client put there, before Authorize (nil: no token) sets
	// the token on a request to Origin.
	Credentials []string
	Authorize   func(http.Header)
	// Answered, when set, sees each answer first.
	Answered func(*http.Response)
	Retry    func(resp *http.Response, try int) (wait time.Duration, again bool)
	Sleep    func(context.Context, time.Duration) error
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	for try := 1; ; try++ {
		r := req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		// Any URL can reach here: a redirect within the API, or an absolute URL from
		// an answer (an upload URL, a Link header).
		for _, h := range t.Credentials {
			r.Header.Del(h)
		}
		if t.Authorize != nil && Origin(r.URL) == t.Origin {
			t.Authorize(r.Header)
		}
		resp, err := t.Next.RoundTrip(r)
		if err != nil {
			return resp, err
		}
		if t.Answered != nil {
			t.Answered(resp)
		}
		if try == MaxTries {
			return resp, nil
		}
		wait, again := t.Retry(resp, try)
		if !again || wait > MaxWait {
			return resp, nil
		}
		_ = resp.Body.Close()
		if err := t.Sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// RateLimitWait is how long a rate-limited answer asks to wait: Retry-After's
// seconds, else until the Unix time in the reset header (GitHub's
// X-RateLimit-Reset, GitLab's RateLimit-Reset) and a second more; false when the
// answer says neither.
func RateLimitWait(h http.Header, reset string) (time.Duration, bool) {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := strconv.ParseInt(h.Get(reset), 10, 64); err == nil {
		return max(time.Until(time.Unix(at, 0)), 0) + time.Second, true
	}
	return 0, false
}

// Sleep waits d, or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
