package gitea

import (
	"net/http"
	"time"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// credentials are the headers a Gitea credential can travel in: a token (as "token
// X" or "Bearer X") or a user's basic auth in Authorization, a one-time password in
// X-Gitea-OTP. Each is removed from every request (forge.Transport) before the token
// is set on one to the API's origin.
var credentials = []string{"Authorization", "X-Gitea-OTP"}

// authorize sets token as the SDK does, "token X" (Gitea takes "Bearer X" alike);
// nil for none.
func authorize(token string) func(http.Header) {
	if token == "" {
		return nil
	}
	return func(h http.Header) { h.Set("Authorization", "token "+token) }
}

// Gitea keeps no API rate limit of its own; a proxy in front of it may answer 429
// with Retry-After. A request that can be sent twice (GET, and PATCH, which sets a
// body or a state whole) is tried again after a 502, 503 or 504; a POST never is
// (a comment, an issue or a status could be made twice).
//
// retry says whether a response is worth another try, and after how long.
func retry(resp *http.Response, try int) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		if wait, ok := forge.RateLimitWait(resp.Header, "X-RateLimit-Reset"); ok {
			return wait, true
		}
		return time.Minute, true
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if m := resp.Request.Method; m != http.MethodGet && m != http.MethodPatch {
			return 0, false
		}
		return time.Duration(1<<(try-1)) * time.Second, true
	}
	return 0, false
}
