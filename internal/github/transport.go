package github

import (
	"net/http"
	"time"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// bearer sets token as GitHub reads it (forge.Transport.Authorize); nil for none.
func bearer(token string) func(http.Header) {
	if token == "" {
		return nil
	}
	return func(h http.Header) { h.Set("Authorization", "Bearer "+token) }
}

// A request GitHub answered with a rate limit is sent again (forge.Transport): 429,
// or 403 with Retry-After or no requests remaining, after what the headers say
// (Retry-After, else until X-RateLimit-Reset).
//
// rateLimited reads a response's rate-limit headers: how long to wait, and whether it
// is a rate limit at all (a 403 without them is a permission problem).
func rateLimited(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	// The reset time counts only when no requests remain.
	exhausted, reset := resp.Header.Get("X-RateLimit-Remaining") == "0", ""
	if exhausted {
		reset = "X-RateLimit-Reset"
	}
	if wait, ok := forge.RateLimitWait(resp.Header, reset); ok {
		return wait, true
	}
	if exhausted || resp.StatusCode == http.StatusTooManyRequests {
		return time.Minute, true
	}
	return 0, false
}
