package github

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

// origin is what the token is bound to: the scheme, host and port of a URL, with
// the scheme's default port filled in, so https://api.github.com and
// https://api.github.com:443 are one origin and http:// or another port is not.
func origin(u *url.URL) string {
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

// refuseOtherOrigins is the client's redirect policy. GitHub redirects within the API
// (a renamed repository answers 301 with its new address on the same host); a
// redirect anywhere else is not followed at all: the token is added by the transport,
// not by the request, so Go's own stripping of Authorization on redirects does not
// apply, and a host that is not the API has no answer drift could use.
func refuseOtherOrigins(api string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if o := origin(req.URL); o != api {
			return fmt.Errorf("GitHub's answer to %s %s redirects to %s, which is not the API at %s; drift does not follow redirects to other hosts, so the token is never sent there: check --github-api-url (GITHUB_API_URL)",
				via[0].Method, via[0].URL.Path, o, api)
		}
		return nil
	}
}

// rateLimitTransport authenticates requests to the API's origin (and only those) and
// retries those GitHub answered with a rate limit: 429, or 403 with Retry-After or no
// requests remaining. It waits what the headers say (Retry-After, else until
// X-RateLimit-Reset), at most maxWait each time, and tries at most maxTries times.
type rateLimitTransport struct {
	next   http.RoundTripper
	token  string
	origin string // origin of the API URL, the only one that gets the token
	sleep  func(context.Context, time.Duration) error
}

const (
	maxTries = 4
	maxWait  = 90 * time.Second
)

func (t *rateLimitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for try := 1; ; try++ {
		r := req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		// Any URL can reach here: a redirect (should the policy ever allow one) or an
		// absolute URL from a response (an upload URL, a Link header).
		if t.token != "" && origin(r.URL) == t.origin {
			r.Header.Set("Authorization", "Bearer "+t.token)
		} else {
			r.Header.Del("Authorization")
		}
		resp, err := t.next.RoundTrip(r)
		if err != nil || try == maxTries {
			return resp, err
		}
		wait, limited := rateLimited(resp)
		if !limited || wait > maxWait {
			return resp, nil
		}
		_ = resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// rateLimited reads a response's rate-limit headers: how long to wait, and whether it
// is a rate limit at all (a 403 without them is a permission problem).
func rateLimited(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Until(time.Unix(reset, 0)), 0) + time.Second, true
		}
		return time.Minute, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return time.Minute, true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
