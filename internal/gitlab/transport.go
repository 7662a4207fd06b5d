package gitlab

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

// origin is what the token is bound to: the scheme, host and port of a URL, with the
// scheme's default port filled in, so https://gitlab.com and https://gitlab.com:443
// are one origin and http:// or another port is not.
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

// refuseOtherOrigins is the client's redirect policy: a redirect within the API's
// origin is followed (a renamed project), anywhere else it is refused. The token is
// added by the transport, not by the request, and PRIVATE-TOKEN is not a header Go
// drops on a redirect to another host: refusing is what keeps it home.
func refuseOtherOrigins(api string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if o := origin(req.URL); o != api {
			return fmt.Errorf("GitLab's answer to %s %s redirects to %s, which is not the API at %s; drift does not follow redirects to other hosts, so the token is never sent there: check --gitlab-api-url (CI_API_V4_URL)",
				via[0].Method, via[0].URL.Path, o, api)
		}
		return nil
	}
}

// transport authenticates requests to the API's origin (and only those) with
// PRIVATE-TOKEN, and retries what GitLab answers with a rate limit (429: waiting what
// Retry-After says, else until RateLimit-Reset) or, for requests that can be sent
// twice (GET, PUT), a 502, 503 or 504. It waits at most maxWait each time and tries
// at most maxTries times; the wait is injected, so tests record it.
type transport struct {
	next   http.RoundTripper
	token  string
	origin string
	sleep  func(context.Context, time.Duration) error
}

const (
	maxTries = 4
	maxWait  = 90 * time.Second
)

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	for try := 1; ; try++ {
		r := req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		// Whatever the client put there, only the API's own origin hears a credential.
		for _, h := range []string{"Private-Token", "Job-Token", "Authorization"} {
			r.Header.Del(h)
		}
		if t.token != "" && origin(r.URL) == t.origin {
			r.Header.Set("PRIVATE-TOKEN", t.token)
		}
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			return resp, err
		}
		// client-go paces requests by RateLimit-Limit with a limiter that sleeps on the
		// wall clock; drift sends one request at a time and waits only as answers say.
		resp.Header.Del("RateLimit-Limit")
		if try == maxTries {
			return resp, nil
		}
		wait, again := retryAfter(resp, try)
		if !again || wait > maxWait {
			return resp, nil
		}
		_ = resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// retryAfter says whether a response is worth another try, and after how long.
func retryAfter(resp *http.Response, try int) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, true
		}
		if reset, err := strconv.ParseInt(resp.Header.Get("RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Until(time.Unix(reset, 0)), 0) + time.Second, true
		}
		return time.Minute, true
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if m := resp.Request.Method; m != http.MethodGet && m != http.MethodPut {
			return 0, false // a POST may have been done: never sent twice
		}
		return time.Duration(1<<(try-1)) * time.Second, true
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
