package bitbucket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Open makes the client of the dialect the API URL names: Bitbucket Cloud
// (https://api.bitbucket.org/2.0, a repository named workspace/slug) or Data Center
// (https://host/rest/api/1.0 or /rest/api/latest, PROJECT/slug). The token goes to
// the API URL's scheme, host and port only; redirects elsewhere are refused; rate
// limits are waited out as the answers say, a bounded number of times.
func Open(ci forge.CI, base http.RoundTripper) (forge.Site, error) {
	return open(ci, base, forge.Sleep)
}

func open(ci forge.CI, base http.RoundTripper, sleep func(context.Context, time.Duration) error) (forge.Site, error) {
	c, dc, err := newClient(ci, base, sleep)
	if err != nil {
		return nil, err
	}
	if dc {
		return &dataCenter{client: c}, nil
	}
	return &cloud{client: c}, nil
}

// client is what both dialects share: the HTTP client bound to the API's origin, the
// repository, and the errors explained.
type client struct {
	http *http.Client
	// api is the API's root: https://api.bitbucket.org/2.0, or a Data Center's
	// https://host/context/rest.
	api     *url.URL
	origin  string
	ci      forge.CI
	product string // "Bitbucket Cloud" or "Bitbucket Data Center"
	// owner and slug name the repository: a workspace (Cloud) or project key (Data
	// Center), then the repository's slug.
	owner, slug string
	// secrets are what no error may hold: the token, and the password part of
	// user:password credentials.
	secrets []string

	mu sync.Mutex
	// username is the X-AUSERNAME a Data Center answer named ("" none yet).
	username string
}

func newClient(ci forge.CI, base http.RoundTripper, sleep func(context.Context, time.Duration) error) (*client, bool, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	u, err := url.Parse(strings.TrimSuffix(ci.APIURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, false, fmt.Errorf("the Bitbucket API URL %q is not an http(s) URL such as %s or https://bitbucket.example/rest/api/1.0 (--bitbucket-api-url)", ci.APIURL, DefaultAPIURL)
	}
	c := &client{ci: ci, product: "Bitbucket Cloud"}
	dc := false
	switch p := u.Path; {
	case strings.HasSuffix(p, "/2.0"):
	case strings.HasSuffix(p, "/rest/api/1.0"), strings.HasSuffix(p, "/rest/api/latest"):
		dc, c.product = true, "Bitbucket Data Center"
		u.Path = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(p, "/1.0"), "/latest"), "/api")
	default:
		return nil, false, fmt.Errorf("the Bitbucket API URL %q names neither Bitbucket Cloud's API (%s) nor a Data Center's (https://bitbucket.example/rest/api/1.0) (--bitbucket-api-url)", ci.APIURL, DefaultAPIURL)
	}
	c.api, c.origin = u, forge.Origin(u)
	owner, slug, ok := strings.Cut(ci.Repository, "/")
	if !ok || owner == "" || slug == "" || strings.ContainsAny(slug, "/?#") || strings.ContainsAny(owner, "?#") {
		what := "workspace/slug"
		if dc {
			what = "PROJECT/slug"
		}
		return nil, false, fmt.Errorf("the Bitbucket repository %q is not %s (--bitbucket-repository)", ci.Repository, what)
	}
	c.owner, c.slug = owner, slug
	if ci.Token != "" {
		c.secrets = append(c.secrets, ci.Token)
		if _, pass, ok := strings.Cut(ci.Token, ":"); ok && pass != "" {
			c.secrets = append(c.secrets, pass)
		}
	}
	c.http = &http.Client{
		Transport: &forge.Transport{Next: base, Origin: c.origin, Credentials: credentials, Authorize: authorization(ci.Token),
			Answered: c.answered, Retry: retryAfter, Sleep: sleep},
		CheckRedirect: forge.RefuseOtherOrigins(c.origin, c.product, "--bitbucket-api-url"),
		Timeout:       60 * time.Second,
	}
	return c, dc, nil
}

// credentials are the headers a Bitbucket credential can travel in: both dialects take
// a token or a password in Authorization only (Bearer or Basic), and a session
// cookie is never drift's.
var credentials = []string{"Authorization", "Cookie"}

// authorization sets the token as Bitbucket reads it: a token holding a colon is
// user:password for HTTP Basic (an Atlassian API token or app password with its
// account, a Data Center user's password or token), any other a bearer token (an
// access token of a repository, project or workspace; a Data Center HTTP access
// token). nil for none.
func authorization(token string) func(http.Header) {
	if token == "" {
		return nil
	}
	value := "Bearer " + token
	if strings.Contains(token, ":") {
		value = "Basic " + base64.StdEncoding.EncodeToString([]byte(token))
	}
	return func(h http.Header) { h.Set("Authorization", value) }
}

// answered keeps the username a Data Center answer of the API's origin names
// (X-AUSERNAME, set on every authenticated answer).
func (c *client) answered(resp *http.Response) {
	if resp.Request == nil || forge.Origin(resp.Request.URL) != c.origin {
		return
	}
	if name := resp.Header.Get("X-Ausername"); name != "" {
		c.mu.Lock()
		c.username = name
		c.mu.Unlock()
	}
}

// A request Bitbucket answered with a rate limit (429: after what Retry-After says,
// else X-RateLimit-Reset, else a minute) is sent again (forge.Transport), and so is
// one that can be sent twice (GET, PUT) answered with a 502, 503 or 504.
func retryAfter(resp *http.Response, try int) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		if wait, ok := forge.RateLimitWait(resp.Header, "X-RateLimit-Reset"); ok {
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

// path is the API's URL of the path below its root, each segment escaped.
func (c *client) path(segments ...string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(c.api.String(), "/"))
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// apiError is Bitbucket's answer to a request it refused: Cloud's {"type": "error",
// "error": {"message", "detail"}} or Data Center's {"errors": [{"context",
// "message"}]}, or the start of whatever else it answered.
type apiError struct {
	Code    int
	Message string
}

func (e *apiError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("%d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// do sends method to u (an absolute URL on the API's origin) with in as JSON, and
// decodes the answer into out. It returns the answer's headers.
func (c *client) do(ctx context.Context, method, u string, in, out any) (http.Header, error) {
	target, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	if forge.Origin(target) != c.origin {
		// A next page's URL comes from the answer: the token stays home.
		return nil, fmt.Errorf("%s's answer points to %s, which is not the API at %s; drift does not follow it, so the token is never sent there: check --bitbucket-api-url",
			c.product, forge.Origin(target), c.origin)
	}
	var body io.Reader
	var raw []byte
	if in != nil {
		if raw, err = json.Marshal(in); err != nil {
			return nil, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
		// Data Center's XSRF check never applies to JSON; the header says so anyway.
		req.Header.Set("X-Atlassian-Token", "no-check")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return resp.Header, err
	}
	if resp.StatusCode >= 300 {
		return resp.Header, &apiError{Code: resp.StatusCode, Message: errorMessage(data)}
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.Header, fmt.Errorf("%s's answer to %s %s is not the JSON expected: %w", c.product, method, target.Path, err)
		}
	}
	return resp.Header, nil
}

// errorMessage is what an error answer says.
func errorMessage(data []byte) string {
	var e struct {
		Error *struct {
			Message string          `json:"message"`
			Detail  json.RawMessage `json:"detail"`
		} `json:"error"`
		Errors []struct {
			Context *string `json:"context"`
			Message string  `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(data, &e) == nil {
		switch {
		case e.Error != nil:
			msg := e.Error.Message
			if d := strings.TrimSpace(string(e.Error.Detail)); d != "" && d != "null" && d != `""` {
				msg += " (" + strings.Trim(d, `"`) + ")"
			}
			return msg
		case len(e.Errors) > 0:
			var msgs []string
			for _, x := range e.Errors {
				if x.Context != nil && *x.Context != "" {
					msgs = append(msgs, *x.Context+": "+x.Message)
				} else {
					msgs = append(msgs, x.Message)
				}
			}
			return strings.Join(msgs, "; ")
		}
	}
	s := strings.TrimSpace(string(data))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// Error is a Bitbucket failure explained; its text never holds the token.
type Error struct {
	Code int
	msg  string
}

func (e *Error) Error() string { return e.msg }

// StatusCode returns the HTTP status of a Bitbucket error (0 when there is none).
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var a *apiError
	if errors.As(err, &a) {
		return a.Code
	}
	return 0
}

// TooLong says whether Bitbucket refused a comment for its size: a 413, or a 400 that
// says so (Data Center: "Please enter a non-empty value less than 32768 characters").
func TooLong(err error) bool {
	switch StatusCode(err) {
	case http.StatusRequestEntityTooLarge:
		return true
	case http.StatusBadRequest:
		msg := err.Error()
		return strings.Contains(msg, "less than") && strings.Contains(msg, "characters") || strings.Contains(msg, "too long")
	}
	return false
}

// explain turns a failed request into what to do, with every secret scrubbed from
// whatever the server echoed.
func (c *client) explain(what string, err error) error {
	code := StatusCode(err)
	token := "the token"
	var msg string
	switch {
	case code == http.StatusUnauthorized:
		msg = fmt.Sprintf("%s refused %s to %s (401): it is wrong, expired or revoked, or a username (%s) is missing or wrong for an API token or app password (%s): %v",
			c.product, token, what, UsernameVariable, Kind.Docs, err)
	case code == http.StatusForbidden:
		msg = fmt.Sprintf("%s refused to %s (403): the token lacks the scope or permission (a Cloud access token needs pullrequest:write for comments, repository:write for build statuses, issue:write for issues; a Data Center token needs repository write); "+
			"a pull request from a fork runs without the repository's secured variables; the report is still in the step's artifacts (%s): %v", c.product, what, Kind.Docs, err)
	case code == http.StatusNotFound:
		msg = fmt.Sprintf("%s could not %s (404): check the repository (%s/%s) and the pull request, and that the token can read them: %v", c.product, what, c.owner, c.slug, err)
	case code == http.StatusConflict:
		msg = fmt.Sprintf("%s could not %s (409, a conflict): %v", c.product, what, err)
	case code == http.StatusRequestEntityTooLarge:
		msg = fmt.Sprintf("%s refused to %s (413): the request is larger than it allows: %v", c.product, what, err)
	case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
		msg = fmt.Sprintf("%s rejected the request to %s (%d): %v", c.product, what, code, err)
	case code == http.StatusTooManyRequests:
		msg = fmt.Sprintf("%s's rate limit (429) stopped drift after %d tries to %s; run again later: %v", c.product, forge.MaxTries, what, err)
	case code >= 500:
		msg = fmt.Sprintf("%s failed to %s (%d, a server error; GET and PUT were tried %d times): %v", c.product, what, code, forge.MaxTries, err)
	default:
		msg = fmt.Sprintf("failed to %s on %s: %v", what, c.product, err)
	}
	return c.scrubbed(code, msg)
}

// scrubbed is an Error of msg with every secret replaced.
func (c *client) scrubbed(code int, msg string) error {
	for _, s := range c.secrets {
		msg = strings.ReplaceAll(msg, s, "***")
	}
	if a := authorization(c.ci.Token); a != nil {
		h := http.Header{}
		a(h)
		if v := h.Get("Authorization"); v != "" {
			_, cred, _ := strings.Cut(v, " ")
			msg = strings.ReplaceAll(msg, cred, "***")
		}
	}
	return &Error{Code: code, msg: msg}
}

// cut is s in at most n characters, "..." ending what was cut.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// statusKey is the build status's key for a status name: "drift" for drift's own,
// else drift- and a hash of the name, so that each name keeps one status that later
// runs overwrite, within the 40 characters Bitbucket Cloud keeps of a key.
func statusKey(name string) string {
	if name == "" || name == "drift" {
		return "drift"
	}
	sum := sha256.Sum256([]byte(name))
	return "drift-" + hex.EncodeToString(sum[:])[:16]
}
