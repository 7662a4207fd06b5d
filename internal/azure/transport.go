package azure

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// credentials are the headers an Azure DevOps token can travel in: removed from
// every request, then set on the API's own (forge.Transport).
var credentials = []string{"Authorization"}

// authorization sets token as Azure DevOps reads it (forge.Transport.Authorize);
// nil for none. System.AccessToken (the pipeline's job token) and Microsoft Entra
// tokens are JWTs, sent as Bearer; a personal access token is sent as Basic with
// an empty user name, as the library's NewPatConnection sends it (Azure DevOps
// ignores the user name and reads the password as the PAT).
func authorization(token string) func(http.Header) {
	if token == "" {
		return nil
	}
	value := "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+token))
	if isJWT(token) {
		value = "Bearer " + token
	}
	return func(h http.Header) { h.Set("Authorization", value) }
}

// isJWT says whether token is a JSON Web Token: three base64url parts, the first a
// JSON object ("eyJ" is how `{"` encodes). A PAT is 52 (or 84) characters of one part.
func isJWT(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "eyJ") {
		return false
	}
	for _, p := range parts[:2] {
		if _, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(p, "=")); err != nil {
			return false
		}
	}
	return true
}

// A request Azure DevOps throttled (429, or 503 with Retry-After: its resource
// limits answer so, after Retry-After's seconds, else until X-RateLimit-Reset) is
// sent again (forge.Transport), and so is a GET or PATCH answered with 502, 503 or
// 504. A POST is never sent twice: a thread, a status, a work item or a comment may
// have been made.
func retryAfter(resp *http.Response, try int) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		if wait, ok := forge.RateLimitWait(resp.Header, "X-RateLimit-Reset"); ok {
			return wait, true
		}
		return time.Minute, true
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if m := resp.Request.Method; m != http.MethodGet && m != http.MethodPatch && m != http.MethodOptions {
			return 0, false
		}
		if wait, ok := forge.RateLimitWait(resp.Header, "X-RateLimit-Reset"); ok {
			return wait, true
		}
		return time.Duration(1<<(try-1)) * time.Second, true
	}
	return 0, false
}
