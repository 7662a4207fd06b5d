package github

import (
	"net/http"
	"strconv"
	"time"
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
