// Package bitbuckettest is a local stand-in for the parts of Bitbucket's REST APIs
// drift uses, in either dialect and in its shapes.
//
// Cloud (/2.0): the token's user (/user, refused to access tokens as Bitbucket
// refuses it), pull request comments (paginated with pagelen, page and a next URL;
// created, updated by their author only), build statuses (one per commit and key,
// url required), issues (where the tracker is on; BBQL's content.raw ~ "..." filter,
// state changes through /changes) and their comments; errors as {"type": "error",
// "error": {...}}, 403 naming the scopes a token lacks.
//
// Data Center (/rest): the repository (every authenticated answer names its user in
// X-AUSERNAME), /plugins/servlet/applinks/whoami, pull request activities
// (paginated with start, limit, isLastPage and nextPageStart, newest first; an edit
// adds an activity), comments with versions (a stale version is a 409), the limit on
// a comment's length (400 at 32,768 UTF-16 units), build statuses; errors as
// {"errors": [...]}.
//
// It keeps state, records every request with its host and credentials, and can be
// told to answer with faults.
package bitbuckettest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

// Dialect is which Bitbucket the server is.
type Dialect int

const (
	Cloud Dialect = iota
	DataCenter
)

// User is a Bitbucket user: UUID for Cloud, Name (the username) for Data Center.
type User struct {
	UUID, Name, DisplayName string
}

// Token is what a credential stands for: its user, its scopes (Cloud:
// pullrequest:write, repository:write, issue:write, each implying its read; Data
// Center: REPO_READ, REPO_WRITE) and whether it is an access token, which Cloud's
// GET /user refuses.
type Token struct {
	User        User
	Scopes      []string
	AccessToken bool
}

// RepositoryBot is the user of a Cloud repository access token named "drift", or of
// a Data Center repository HTTP access token.
var RepositoryBot = User{UUID: "{7d6f1c2a-0b1e-4d9a-9c55-6a1f0c9e3b21}", Name: "bot-repo-gitops-drift", DisplayName: "drift"}

// Someone is another member of the repository.
var Someone = User{UUID: "{11111111-2222-3333-4444-555555555555}", Name: "someone", DisplayName: "Some One"}

// AllScopes are a token's scopes that allow everything drift does.
var AllScopes = []string{"pullrequest:write", "repository:write", "issue:write", "REPO_WRITE"}

// Comment is a pull request comment.
type Comment struct {
	ID      int64
	Text    string
	Author  User
	Version int
	Deleted bool
	Inline  bool
}

// Issue is a Cloud issue.
type Issue struct {
	ID       int64
	Title    string
	Content  string
	State    string
	Reporter User
	Comments []string
}

// Request is one request as the server received it.
type Request struct {
	Method, Host, Path, Query string
	// The credentials it carried ("" when none).
	Authorization, Cookie string
	Body                  string
}

// Server is the stand-in for one repository and its pull request PR. Its fields are
// safe to read after requests are done.
type Server struct {
	*httptest.Server
	Dialect Dialect
	// Tokens are the credentials the server knows: a bearer token, or user:password
	// for HTTP Basic.
	Tokens map[string]Token
	// Owner and Slug name the repository: a workspace or a project key, then its slug.
	Owner, Slug string
	PR          int64
	// MaxComment is the most UTF-16 units a comment holds (0: no limit).
	MaxComment int
	// IssueTracker says whether the Cloud repository's issue tracker is on.
	IssueTracker bool
	// NoUsernameHeader and NoWhoami take Data Center's two ways of naming the user away.
	NoUsernameHeader, NoWhoami bool
	// Fault, when set, may answer a request instead of the server (return true).
	Fault func(w http.ResponseWriter, r *http.Request, n int) bool

	mu       sync.Mutex
	nextID   int64
	comments []*Comment
	// activities are Data Center's: the comment's ID of each COMMENTED activity, with
	// its action (ADDED, EDITED), oldest first.
	activities []activity
	// Statuses are the build statuses by commit, then key.
	Statuses map[string]map[string]map[string]any
	Issues   map[int64]*Issue
	// Received lists every request; Writes counts those that change something.
	Received []Request
	Writes   int
}

type activity struct {
	comment int64
	action  string
}

// New starts a server of the dialect for acme/gitops (Cloud) or GIT/gitops (Data
// Center), pull request 7, which knows token as a repository access token of
// RepositoryBot allowed everything.
func New(d Dialect, token string) *Server {
	s := &Server{Dialect: d, Tokens: map[string]Token{token: {User: RepositoryBot, Scopes: AllScopes, AccessToken: true}},
		Owner: "acme", Slug: "gitops", PR: 7, nextID: 100, IssueTracker: true,
		Statuses: map[string]map[string]map[string]any{}, Issues: map[int64]*Issue{}}
	if d == DataCenter {
		s.Owner, s.MaxComment = "GIT", 32767
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// APIURL is the API's URL as drift is given it.
func (s *Server) APIURL() string {
	if s.Dialect == DataCenter {
		return s.URL + "/rest/api/1.0"
	}
	return s.URL + "/2.0"
}

// AddComment adds a comment to the pull request as user would.
func (s *Server) AddComment(user User, text string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(user, text).ID
}

// EditComment edits a comment as its author would in the web page.
func (s *Server) EditComment(id int64, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if c.ID == id {
			c.Text, c.Version = text, c.Version+1
			s.activities = append(s.activities, activity{id, "EDITED"})
		}
	}
}

// AddInlineComment adds a comment on a file's line.
func (s *Server) AddInlineComment(user User, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addComment(user, text).Inline = true
}

// DeleteComment deletes a comment as a person would (Cloud keeps it, marked deleted).
func (s *Server) DeleteComment(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.comments {
		if c.ID == id {
			if s.Dialect == Cloud {
				c.Deleted = true
			} else {
				s.comments = slices.Delete(s.comments, i, i+1)
			}
			return
		}
	}
}

// Comments returns the pull request's comments (not deleted), oldest first.
func (s *Server) Comments() []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if !c.Deleted {
			out = append(out, *c)
		}
	}
	return out
}

// Requests lists "METHOD path" of every request.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.Received {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

func (s *Server) addComment(user User, text string) *Comment {
	s.nextID++
	c := &Comment{ID: s.nextID, Text: text, Author: user}
	s.comments = append(s.comments, c)
	s.activities = append(s.activities, activity{c.ID, "ADDED"})
	return c
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

// fail answers as the dialect does.
func (s *Server) fail(w http.ResponseWriter, code int, msg string, detail any) {
	if s.Dialect == DataCenter {
		var ctx any
		if d, ok := detail.(string); ok {
			ctx = d
		}
		writeJSON(w, code, map[string]any{"errors": []map[string]any{{"context": ctx, "message": msg, "exceptionName": nil}}})
		return
	}
	e := map[string]any{"message": msg}
	if detail != nil {
		e["detail"] = detail
	}
	writeJSON(w, code, map[string]any{"type": "error", "error": e})
}

// token is the request's credential's token, if the server knows it.
func (s *Server) token(r *http.Request) (Token, bool) {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		tok, known := s.Tokens[t]
		return tok, known
	}
	if b, ok := strings.CutPrefix(h, "Basic "); ok {
		raw, err := base64.StdEncoding.DecodeString(b)
		if err != nil {
			return Token{}, false
		}
		tok, known := s.Tokens[string(raw)]
		return tok, known && !tok.AccessToken
	}
	return Token{}, false
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.Received = append(s.Received, Request{Method: r.Method, Host: r.Host, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), Cookie: r.Header.Get("Cookie"), Body: string(body)})
	n := len(s.Received)
	fault := s.Fault
	s.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	tok, ok := s.token(r)
	if !ok {
		if s.Dialect == DataCenter {
			s.fail(w, http.StatusUnauthorized, "Authentication failed. Please check your credentials and try again.", nil)
		} else {
			s.fail(w, http.StatusUnauthorized, "Token is invalid, expired, or not supported for this endpoint.", nil)
		}
		return
	}
	var req map[string]any
	if len(body) > 0 && json.Unmarshal(body, &req) != nil {
		s.fail(w, http.StatusBadRequest, "the body is not JSON", nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet {
		s.Writes++
	}
	if s.Dialect == DataCenter {
		if !s.NoUsernameHeader {
			w.Header().Set("X-AUSERNAME", tok.User.Name)
		}
		s.dataCenter(w, r, tok, req)
		return
	}
	s.cloud(w, r, tok, req)
}

// has says whether the token has scope (or one that implies it).
func has(tok Token, scope string) bool {
	base, _, _ := strings.Cut(scope, ":")
	for _, s := range tok.Scopes {
		if s == scope || (s == base+":write" && !strings.HasSuffix(scope, ":admin")) || s == "REPO_WRITE" && scope == "REPO_READ" {
			return true
		}
	}
	return false
}

// scoped refuses a token without scope as Cloud does (403).
func (s *Server) scoped(w http.ResponseWriter, tok Token, scope string) bool {
	if has(tok, scope) {
		return true
	}
	granted := append([]string{}, tok.Scopes...)
	s.fail(w, http.StatusForbidden, "Your credentials lack one or more required privilege scopes.", map[string]any{"granted": granted, "required": []string{scope}})
	return false
}

var (
	cloudRepo     = regexp.MustCompile(`^/2\.0/repositories/([^/]+)/([^/]+)(/.*)?$`)
	cloudComments = regexp.MustCompile(`^/pullrequests/(\d+)/comments(?:/(\d+))?$`)
	cloudStatus   = regexp.MustCompile(`^/commit/([0-9a-f]{7,40})/statuses/build/?$`)
	cloudIssues   = regexp.MustCompile(`^/issues(?:/(\d+)(/changes|/comments)?)?$`)
	bbqlContains  = regexp.MustCompile(`^content\.raw ~ "((?:[^"\\]|\\.)*)"$`)
)

func (s *Server) cloudUser(u User) map[string]any {
	return map[string]any{"type": "user", "uuid": u.UUID, "display_name": u.DisplayName, "nickname": u.Name}
}

func (s *Server) cloudComment(c *Comment) map[string]any {
	out := map[string]any{"id": c.ID, "type": "pullrequest_comment", "deleted": c.Deleted, "user": s.cloudUser(c.Author),
		"content":    map[string]any{"type": "rendered", "raw": c.Text, "markup": "markdown", "html": "<p>(rendered)</p>"},
		"created_on": time.Date(2026, 1, 1, 0, 0, int(c.ID), 0, time.UTC).Format(time.RFC3339Nano)}
	if c.Inline {
		out["inline"] = map[string]any{"path": "apps/web.yaml", "to": 3}
	}
	return out
}

func (s *Server) cloudIssue(is *Issue) map[string]any {
	return map[string]any{"id": is.ID, "type": "issue", "title": is.Title, "state": is.State, "kind": "bug", "priority": "major",
		"reporter": s.cloudUser(is.Reporter), "content": map[string]any{"raw": is.Content, "markup": "markdown"}}
}

// cloudPage writes one page of values as Cloud does: pagelen (default 10, at most
// 100), page, size, and next's URL while more remain.
func (s *Server) cloudPage(w http.ResponseWriter, r *http.Request, values []any) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("pagelen"))
	if per <= 0 {
		per = 10
	}
	if per > 100 {
		s.fail(w, http.StatusBadRequest, "Invalid pagelen", nil)
		return
	}
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	start := min((page-1)*per, len(values))
	end := min(start+per, len(values))
	out := map[string]any{"pagelen": per, "page": page, "size": len(values), "values": append([]any{}, values[start:end]...)}
	if end < len(values) {
		q.Set("page", strconv.Itoa(page+1))
		out["next"] = s.URL + r.URL.EscapedPath() + "?" + q.Encode()
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) cloud(w http.ResponseWriter, r *http.Request, tok Token, req map[string]any) {
	path := r.URL.EscapedPath()
	if path == "/2.0/user" && r.Method == http.MethodGet {
		if tok.AccessToken {
			s.fail(w, http.StatusForbidden, "This API is not accessible by this authentication mechanism", nil)
			return
		}
		writeJSON(w, http.StatusOK, s.cloudUser(tok.User))
		return
	}
	m := cloudRepo.FindStringSubmatch(path)
	if m == nil {
		s.fail(w, http.StatusNotFound, "Resource not found", nil)
		return
	}
	if m[1] != s.Owner || m[2] != s.Slug {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("Repository %s/%s not found", m[1], m[2]), nil)
		return
	}
	rest := m[3]
	raw := func(v any) (string, bool) {
		c, _ := v.(map[string]any)
		t, ok := c["raw"].(string)
		return t, ok
	}
	switch {
	case cloudComments.MatchString(rest):
		cm := cloudComments.FindStringSubmatch(rest)
		if pr, _ := strconv.ParseInt(cm[1], 10, 64); pr != s.PR {
			s.fail(w, http.StatusNotFound, "No PullRequest matches the given query.", nil)
			return
		}
		switch {
		case cm[2] == "" && r.Method == http.MethodGet:
			if !s.scoped(w, tok, "pullrequest") {
				return
			}
			var values []any
			for _, c := range s.comments {
				values = append(values, s.cloudComment(c))
			}
			s.cloudPage(w, r, values)
		case cm[2] == "" && r.Method == http.MethodPost:
			if !s.scoped(w, tok, "pullrequest:write") {
				return
			}
			text, ok := raw(req["content"])
			if !ok || !s.fits(w, text) {
				if !ok {
					s.fail(w, http.StatusBadRequest, "content: This field is required.", nil)
				}
				return
			}
			writeJSON(w, http.StatusCreated, s.cloudComment(s.addComment(tok.User, text)))
		case cm[2] != "" && r.Method == http.MethodPut:
			if !s.scoped(w, tok, "pullrequest:write") {
				return
			}
			id, _ := strconv.ParseInt(cm[2], 10, 64)
			for _, c := range s.comments {
				if c.ID == id && !c.Deleted {
					if c.Author.UUID != tok.User.UUID {
						s.fail(w, http.StatusForbidden, "You can only edit your own comments.", nil)
						return
					}
					text, ok := raw(req["content"])
					if !ok {
						s.fail(w, http.StatusBadRequest, "content: This field is required.", nil)
						return
					}
					if !s.fits(w, text) {
						return
					}
					c.Text = text
					writeJSON(w, http.StatusOK, s.cloudComment(c))
					return
				}
			}
			s.fail(w, http.StatusNotFound, "No PullRequestComment matches the given query.", nil)
		default:
			s.fail(w, http.StatusMethodNotAllowed, "Method not allowed", nil)
		}
	case cloudStatus.MatchString(rest) && r.Method == http.MethodPost:
		if !s.scoped(w, tok, "repository:write") {
			return
		}
		s.setStatus(w, cloudStatus.FindStringSubmatch(rest)[1], req, []string{"SUCCESSFUL", "FAILED", "INPROGRESS", "STOPPED"}, http.StatusCreated)
	case cloudIssues.MatchString(rest):
		s.cloudIssues(w, r, tok, req, cloudIssues.FindStringSubmatch(rest))
	default:
		s.fail(w, http.StatusNotFound, "Resource not found", nil)
	}
}

// setStatus keeps a build status on sha, one per key: key, state and url are
// required, url an absolute http(s) URL.
func (s *Server) setStatus(w http.ResponseWriter, sha string, req map[string]any, states []string, code int) {
	str := func(k string) string { v, _ := req[k].(string); return v }
	for _, k := range []string{"key", "state", "url"} {
		if str(k) == "" {
			s.fail(w, http.StatusBadRequest, k+": This field is required.", k)
			return
		}
	}
	if !slices.Contains(states, str("state")) {
		s.fail(w, http.StatusBadRequest, "state: not a valid choice", "state")
		return
	}
	if u, err := url.Parse(str("url")); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		s.fail(w, http.StatusBadRequest, "url: Enter a valid URL.", "url")
		return
	}
	limits := map[string]int{"key": 255, "name": 255, "description": 255, "url": 450}
	if s.Dialect == Cloud {
		limits = map[string]int{"key": 40}
	}
	for k, n := range limits {
		if len(utf16.Encode([]rune(str(k)))) > n {
			s.fail(w, http.StatusBadRequest, fmt.Sprintf("%s: Ensure this value has at most %d characters.", k, n), k)
			return
		}
	}
	if s.Statuses[sha] == nil {
		s.Statuses[sha] = map[string]map[string]any{}
	}
	s.Statuses[sha][str("key")] = req
	if code == http.StatusNoContent {
		w.WriteHeader(code)
		return
	}
	writeJSON(w, code, map[string]any{"type": "build", "key": str("key"), "state": str("state"), "name": req["name"], "url": str("url"), "description": req["description"]})
}

func (s *Server) fits(w http.ResponseWriter, text string) bool {
	if n := len(utf16.Encode([]rune(text))); s.MaxComment > 0 && (n > s.MaxComment || n == 0) {
		s.fail(w, http.StatusBadRequest, fmt.Sprintf("Please enter a non-empty value less than %d characters", s.MaxComment+1), "text")
		return false
	}
	return true
}

func (s *Server) cloudIssues(w http.ResponseWriter, r *http.Request, tok Token, req map[string]any, m []string) {
	if !s.IssueTracker {
		s.fail(w, http.StatusNotFound, "Repository has no issue tracker.", nil)
		return
	}
	str := func(k string) (string, bool) { v, ok := req[k].(string); return v, ok }
	raw := func() (string, bool) {
		c, _ := req["content"].(map[string]any)
		t, ok := c["raw"].(string)
		return t, ok
	}
	if r.Method == http.MethodGet && !s.scoped(w, tok, "issue") || r.Method != http.MethodGet && !s.scoped(w, tok, "issue:write") {
		return
	}
	if m[1] == "" {
		switch r.Method {
		case http.MethodGet:
			var contains *string
			if q := r.URL.Query().Get("q"); q != "" {
				qm := bbqlContains.FindStringSubmatch(q)
				if qm == nil {
					s.fail(w, http.StatusBadRequest, "Invalid query (the stand-in knows only content.raw ~ \"...\")", nil)
					return
				}
				v := strings.ReplaceAll(qm[1], `\"`, `"`)
				contains = &v
			}
			var ids []int64
			for id := range s.Issues {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			if r.URL.Query().Get("sort") == "-id" {
				slices.Reverse(ids)
			}
			var values []any
			for _, id := range ids {
				if is := s.Issues[id]; contains == nil || strings.Contains(is.Content, *contains) {
					values = append(values, s.cloudIssue(is))
				}
			}
			s.cloudPage(w, r, values)
		case http.MethodPost:
			title, _ := str("title")
			if title == "" {
				s.fail(w, http.StatusBadRequest, "title: This field is required.", nil)
				return
			}
			text, _ := raw()
			is := &Issue{ID: int64(len(s.Issues) + 1), Title: title, Content: text, State: "new", Reporter: tok.User}
			s.Issues[is.ID] = is
			writeJSON(w, http.StatusCreated, s.cloudIssue(is))
		default:
			s.fail(w, http.StatusMethodNotAllowed, "Method not allowed", nil)
		}
		return
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	is := s.Issues[id]
	if is == nil {
		s.fail(w, http.StatusNotFound, "No Issue matches the given query.", nil)
		return
	}
	switch {
	case m[2] == "" && r.Method == http.MethodPut:
		if t, ok := str("title"); ok {
			is.Title = t
		}
		if t, ok := raw(); ok {
			is.Content = t
		}
		if _, ok := req["state"]; ok {
			s.fail(w, http.StatusBadRequest, "state: change it through /changes", nil)
			return
		}
		writeJSON(w, http.StatusOK, s.cloudIssue(is))
	case m[2] == "/changes" && r.Method == http.MethodPost:
		changes, _ := req["changes"].(map[string]any)
		st, _ := changes["state"].(map[string]any)
		state, _ := st["new"].(string)
		switch state {
		case "new", "open", "resolved", "on hold", "invalid", "duplicate", "wontfix", "closed":
		default:
			s.fail(w, http.StatusBadRequest, "changes.state: not a valid state", nil)
			return
		}
		is.State = state
		writeJSON(w, http.StatusCreated, map[string]any{"type": "issue_change", "changes": changes})
	case m[2] == "/comments" && r.Method == http.MethodPost:
		text, _ := raw()
		is.Comments = append(is.Comments, text)
		writeJSON(w, http.StatusCreated, map[string]any{"id": len(is.Comments), "content": map[string]any{"raw": text}, "user": s.cloudUser(tok.User)})
	default:
		s.fail(w, http.StatusMethodNotAllowed, "Method not allowed", nil)
	}
}

var (
	dcRepo     = regexp.MustCompile(`^/rest/api/(?:1\.0|latest)/projects/([^/]+)/repos/([^/]+)(/.*)?$`)
	dcPR       = regexp.MustCompile(`^/pull-requests/(\d+)/(activities|comments)(?:/(\d+))?$`)
	dcBuilds   = regexp.MustCompile(`^/commits/([0-9a-f]{7,40})/builds$`)
	dcEpoch    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	dcUserJSON = func(u User) map[string]any {
		return map[string]any{"name": u.Name, "slug": u.Name, "displayName": u.DisplayName, "id": 1, "type": "NORMAL", "active": true}
	}
)

func (s *Server) dcComment(c *Comment) map[string]any {
	out := map[string]any{"id": c.ID, "version": c.Version, "text": c.Text, "author": dcUserJSON(c.Author),
		"createdDate": dcEpoch + c.ID, "updatedDate": dcEpoch + c.ID, "comments": []any{}, "severity": "NORMAL", "state": "OPEN"}
	if c.Inline {
		out["anchor"] = map[string]any{"path": "apps/web.yaml", "line": 3, "lineType": "ADDED", "fileType": "TO"}
	}
	return out
}

func (s *Server) dataCenter(w http.ResponseWriter, r *http.Request, tok Token, req map[string]any) {
	path := r.URL.EscapedPath()
	if path == "/plugins/servlet/applinks/whoami" && !s.NoWhoami {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, tok.User.Name)
		return
	}
	m := dcRepo.FindStringSubmatch(path)
	if m == nil {
		s.fail(w, http.StatusNotFound, "Resource not found", nil)
		return
	}
	if m[1] != s.Owner || m[2] != s.Slug {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("Repository %s/%s does not exist.", m[1], m[2]), nil)
		return
	}
	if !has(tok, "REPO_READ") {
		s.fail(w, http.StatusForbidden, "You are not permitted to access this resource", nil)
		return
	}
	rest := m[3]
	switch {
	case rest == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"slug": s.Slug, "name": s.Slug, "project": map[string]any{"key": s.Owner}})
	case dcBuilds.MatchString(rest) && r.Method == http.MethodPost:
		s.setStatus(w, dcBuilds.FindStringSubmatch(rest)[1], req, []string{"SUCCESSFUL", "FAILED", "INPROGRESS", "CANCELLED", "UNKNOWN"}, http.StatusNoContent)
	case dcPR.MatchString(rest):
		pm := dcPR.FindStringSubmatch(rest)
		if pr, _ := strconv.ParseInt(pm[1], 10, 64); pr != s.PR {
			s.fail(w, http.StatusNotFound, fmt.Sprintf("Pull request %s does not exist in %s/%s.", pm[1], s.Owner, s.Slug), nil)
			return
		}
		s.dcPullRequest(w, r, tok, req, pm[2], pm[3])
	default:
		s.fail(w, http.StatusNotFound, "Resource not found", nil)
	}
}

func (s *Server) dcPullRequest(w http.ResponseWriter, r *http.Request, tok Token, req map[string]any, what, id string) {
	find := func() *Comment {
		n, _ := strconv.ParseInt(id, 10, 64)
		for _, c := range s.comments {
			if c.ID == n {
				return c
			}
		}
		return nil
	}
	switch {
	case what == "activities" && r.Method == http.MethodGet:
		var values []any
		for i := len(s.activities) - 1; i >= 0; i-- {
			a := s.activities[i]
			for _, c := range s.comments {
				if c.ID == a.comment {
					act := map[string]any{"id": 9000 + i, "action": "COMMENTED", "commentAction": a.action, "comment": s.dcComment(c), "user": dcUserJSON(c.Author)}
					if c.Inline {
						act["commentAnchor"] = s.dcComment(c)["anchor"]
					}
					values = append(values, act)
				}
			}
			if i%5 == 0 {
				values = append(values, map[string]any{"id": 8000 + i, "action": "RESCOPED", "user": dcUserJSON(Someone)})
			}
		}
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		if limit <= 0 {
			limit = 25
		}
		limit = min(limit, 1000)
		start, _ := strconv.Atoi(q.Get("start"))
		start = min(max(start, 0), len(values))
		end := min(start+limit, len(values))
		out := map[string]any{"size": end - start, "limit": limit, "start": start, "isLastPage": end == len(values), "values": append([]any{}, values[start:end]...)}
		if end < len(values) {
			out["nextPageStart"] = end
		}
		writeJSON(w, http.StatusOK, out)
	case what == "comments" && id == "" && r.Method == http.MethodPost:
		text, _ := req["text"].(string)
		if !s.fits(w, text) {
			return
		}
		writeJSON(w, http.StatusCreated, s.dcComment(s.addComment(tok.User, text)))
	case what == "comments" && id != "" && r.Method == http.MethodGet:
		c := find()
		if c == nil {
			s.fail(w, http.StatusNotFound, "Comment "+id+" does not exist.", nil)
			return
		}
		writeJSON(w, http.StatusOK, s.dcComment(c))
	case what == "comments" && id != "" && r.Method == http.MethodPut:
		c := find()
		if c == nil {
			s.fail(w, http.StatusNotFound, "Comment "+id+" does not exist.", nil)
			return
		}
		if c.Author.Name != tok.User.Name {
			s.fail(w, http.StatusForbidden, "You are not permitted to edit this comment.", nil)
			return
		}
		v, ok := req["version"].(float64)
		if !ok || int(v) != c.Version {
			s.fail(w, http.StatusConflict, "You are attempting to modify a comment based on out-of-date information.", nil)
			return
		}
		text, _ := req["text"].(string)
		if !s.fits(w, text) {
			return
		}
		c.Text, c.Version = text, c.Version+1
		s.activities = append(s.activities, activity{c.ID, "EDITED"})
		writeJSON(w, http.StatusOK, s.dcComment(c))
	default:
		s.fail(w, http.StatusMethodNotAllowed, "Method not allowed", nil)
	}
}
