package gitlab

import (
	"net/http"
	"time"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// privateToken sets token as GitLab reads it (forge.Transport.Authorize); nil for
// none. Every header a GitLab token can travel in is removed from other requests
// (credentials).
func privateToken(token string) func(http.Header) {
	if token == "" {
		return nil
	}
	return func(h http.Header) { h.Set("PRIVATE-TOKEN", token) }
}

var credentials = []string{"Private-Token", "Job-Token", "Authorization"}

// withoutRateLimitLimit drops RateLimit-Limit from GitLab's answers: client-go
// paces requests by it with a limiter that sleeps on the wall clock; drift sends one
// request at a time and waits only as answers say.
func withoutRateLimitLimit(resp *http.Response) { resp.Header.Del("RateLimit-Limit") }

// A request GitLab answered with a rate limit (429: after what Retry-After says, else
// until RateLimit-Reset) is sent again (forge.Transport), and so is one that can be
// sent twice (GET, PUT) answered with a 502, 503 or 504.
//
// retryAfter says whether a response is worth another try, and after how long.
func retryAfter(resp *http.Response, try int) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		if wait, ok := forge.RateLimitWait(resp.Header, "RateLimit-Reset"); ok {
			return wait, true
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
