// Package giteatest is a local stand-in for the parts of Gitea's (and Forgejo's) REST
// API v1 drift uses, in Gitea's shapes: the server's version (/version), the token's
// user (/user), a pull request's comments (issue comments: listed whole, as Gitea
// lists them, with X-Total-Count), created and edited; commit statuses on the
// repository's commits; issues (listed with Gitea's page/limit pagination, Link and
// X-Total-Count, filtered by label names, state and type), their comments, and the
// repository's labels (which issues take by ID). It checks the token as Gitea does
// (Authorization: "token X" or "Bearer X"; 401 otherwise), the token's scopes (403
// naming the scope), and an Actions job token's limits (a pull request from a fork
// gets a read-only token: 403 on every write). It keeps state, records every request
// with its host, its credentials and its body, and can be told to answer with
// faults.
package giteatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// User is a Gitea user as the API shows it on comments and issues.
type User struct {
	ID       int64  `json:"id"`
	Login    string `json:"login"`
	FullName string `json:"full_name"`
	Email    string `json:"email"`
	// Username repeats Login (Gitea sends both).
	Username string `json:"username"`
}

func user(id int64, login, name string) User {
	return User{ID: id, Login: login, FullName: name, Email: login + "@noreply.gitea.example", Username: login}
}

var (
	// Bot is the user drift's access token belongs to.
	Bot = user(31, "drift-bot", "drift")
	// Someone is another member of the repository.
	Someone = user(17, "someone", "Some One")
	// ActionsUser is the user Gitea shows for what an Actions job token writes
	// (Forgejo's is forgejo-actions): user_model.NewActionsUser, ID -2.
	ActionsUser = user(-2, "gitea-actions", "Gitea Actions")
)

// Comment is an issue or pull request comment.
type Comment struct {
	ID        int64     `json:"id"`
	HTMLURL   string    `json:"html_url"`
	PRURL     string    `json:"pull_request_url"`
	IssueURL  string    `json:"issue_url"`
	User      User      `json:"user"`
	Body      string    `json:"body"`
	Assets    []any     `json:"assets"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Label is a repository label.
type Label struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Exclusive   bool   `json:"exclusive"`
	IsArchived  bool   `json:"is_archived"`
	Color       string `json:"color"` // six hex digits, no '#'
	Description string `json:"description"`
	URL         string `json:"url"`
}

// Issue is an issue or, with PullRequest set, a pull request: they share one
// numbering per repository.
type Issue struct {
	ID          int64      `json:"id"`
	URL         string     `json:"url"`
	HTMLURL     string     `json:"html_url"`
	Number      int64      `json:"number"`
	User        User       `json:"user"`
	Title       string     `json:"title"`
	Body        string     `json:"body"`
	Labels      []Label    `json:"labels"`
	State       string     `json:"state"` // open or closed
	Comments    int        `json:"comments"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	ClosedAt    *time.Time `json:"closed_at"`
	PullRequest *struct {
		Merged bool `json:"merged"`
	} `json:"pull_request"`
}

// Status is a commit status as Gitea shows it ("status" is its state).
type Status struct {
	ID          int64     `json:"id"`
	SHA         string    `json:"-"`
	State       string    `json:"status"`
	TargetURL   string    `json:"target_url"`
	Description string    `json:"description"`
	URL         string    `json:"url"`
	Context     string    `json:"context"`
	Creator     User      `json:"creator"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Request is one request as the server received it.
type Request struct {
	Method, Host, Path, Query string
	// The credentials it carried ("" when none).
	Authorization, OTP string
	Body               string
}

// Server is the stand-in for one repository. Its fields are safe to read after
// requests are done.
type Server struct {
	*httptest.Server
	// Token is an access token of Actor with Scopes; ActionsToken, when set, is an
	// Actions job token (written as ActionsUser, every scope), read-only when
	// ForkPullRequest.
	Token           string
	Scopes          []string
	Actor           User
	ActionsToken    string
	ForkPullRequest bool
	// Owner and Name name the repository.
	Owner, Name string
	// Version is what /version answers.
	Version string
	// MaxBody, when set, is the most a request's body may hold, as a reverse proxy in
	// front of Gitea limits it (nginx's client_max_body_size answers 413).
	MaxBody int
	// PageDefault and PageMax are Gitea's [api] DEFAULT_PAGING_NUM and
	// MAX_RESPONSE_ITEMS.
	PageDefault, PageMax int
	// Fault, when set, may answer a request instead of the server (return true).
	Fault func(w http.ResponseWriter, r *http.Request, n int) bool

	mu       sync.Mutex
	nextID   int64
	commits  map[string]bool
	comments map[int64][]*Comment // by issue or pull request number
	// Issues holds the issues and pull requests by number; Labels the labels.
	Issues   map[int64]*Issue
	Labels   []*Label
	Statuses []Status
	// Received lists every request; Writes counts those that change something.
	Received []Request
	Writes   int
}

// New starts a server for acme/gitops that accepts token as an access token of Bot
// with the scopes drift needs (write:issue, write:repository, read:user).
func New(token string) *Server {
	s := &Server{Token: token, Scopes: []string{"write:issue", "write:repository", "read:user"}, Actor: Bot, Owner: "acme", Name: "gitops",
		Version: "1.24.2", PageDefault: 30, PageMax: 50, nextID: 1000, commits: map[string]bool{}, comments: map[int64][]*Comment{}, Issues: map[int64]*Issue{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

func (s *Server) now() time.Time {
	s.nextID++
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s.nextID) * time.Second)
}

// AddCommit makes sha a commit of the repository: Gitea sets statuses only on those.
func (s *Server) AddCommit(sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits[sha] = true
}

// AddPullRequest opens a pull request by author and returns its number.
func (s *Server) AddPullRequest(author User, title string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.newIssue(author, title, "")
	is.PullRequest = &struct {
		Merged bool `json:"merged"`
	}{}
	return is.Number
}

// AddIssue opens an issue by author with the labels of those names (created when
// missing) and returns its number.
func (s *Server) AddIssue(author User, title, body string, labels ...string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.newIssue(author, title, body)
	for _, name := range labels {
		l := s.labelNamed(name)
		if l == nil {
			l = s.newLabel(name, "ededed", "")
		}
		is.Labels = append(is.Labels, *l)
	}
	return is.Number
}

// AddComment adds a comment to an issue or pull request as author would.
func (s *Server) AddComment(number int64, author User, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(number, author, body).ID
}

// Comments returns an issue's or pull request's comments, oldest first.
func (s *Server) Comments(number int64) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments[number] {
		out = append(out, *c)
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

func (s *Server) newIssue(author User, title, body string) *Issue {
	n := int64(len(s.Issues) + 1)
	now := s.now()
	is := &Issue{ID: 7000 + n, Number: n, User: author, Title: title, Body: body, State: "open", Labels: []Label{}, CreatedAt: now, UpdatedAt: now,
		URL:     fmt.Sprintf("%s/api/v1/repos/%s/%s/issues/%d", s.URL, s.Owner, s.Name, n),
		HTMLURL: fmt.Sprintf("%s/%s/%s/issues/%d", s.URL, s.Owner, s.Name, n)}
	s.Issues[n] = is
	return is
}

func (s *Server) addComment(number int64, author User, body string) *Comment {
	now := s.now()
	c := &Comment{ID: s.nextID, User: author, Body: body, Assets: []any{}, CreatedAt: now, UpdatedAt: now,
		HTMLURL:  fmt.Sprintf("%s/%s/%s/issues/%d#issuecomment-%d", s.URL, s.Owner, s.Name, number, s.nextID),
		IssueURL: fmt.Sprintf("%s/%s/%s/issues/%d", s.URL, s.Owner, s.Name, number)}
	if is := s.Issues[number]; is != nil {
		is.Comments++
		if is.PullRequest != nil {
			c.PRURL, c.IssueURL = fmt.Sprintf("%s/%s/%s/pulls/%d", s.URL, s.Owner, s.Name, number), ""
		}
	}
	s.comments[number] = append(s.comments[number], c)
	return c
}

func (s *Server) labelNamed(name string) *Label {
	for _, l := range s.Labels {
		if l.Name == name {
			return l
		}
	}
	return nil
}

func (s *Server) newLabel(name, color, description string) *Label {
	l := &Label{ID: int64(len(s.Labels) + 1), Name: name, Color: color, Description: description}
	l.URL = fmt.Sprintf("%s/api/v1/repos/%s/%s/labels/%d", s.URL, s.Owner, s.Name, l.ID)
	s.Labels = append(s.Labels, l)
	return l
}

var (
	repoPath        = regexp.MustCompile(`^/api/v1/repos/([^/]+)/([^/]+)(/.*)$`)
	issueComments   = regexp.MustCompile(`^/issues/(\d+)/comments$`)
	issueComment    = regexp.MustCompile(`^/issues/comments/(\d+)$`)
	issuesList      = regexp.MustCompile(`^/issues$`)
	issueOne        = regexp.MustCompile(`^/issues/(\d+)$`)
	labelsList      = regexp.MustCompile(`^/labels$`)
	statusPath      = regexp.MustCompile(`^/statuses/([^/]+)$`)
	labelColor      = regexp.MustCompile(`^#?([0-9a-fA-F]{6})$`)
	swaggerURL      = "/api/swagger"
	errNotFound     = "The target couldn't be found."
	errTokenInvalid = "invalid username, password or token"
)

// fail answers as Gitea's APIContext.APIError does: {"message": ..., "url": ...}.
func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"message": msg, "url": s.URL + swaggerURL})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// who is the user a request's credential is, its scopes and whether it may write
// ("" login: none, or a wrong one).
func (s *Server) who(r *http.Request) (u User, scopes []string, readOnly, ok bool) {
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "bearer") {
		return User{}, nil, false, false
	}
	switch {
	case s.Token != "" && cred == s.Token:
		return s.Actor, s.Scopes, false, true
	case s.ActionsToken != "" && cred == s.ActionsToken:
		return ActionsUser, []string{"all"}, s.ForkPullRequest, true
	}
	return User{}, nil, false, false
}

// hasScope says whether scopes allow need ("write:issue" allows "read:issue").
func hasScope(scopes []string, need string) bool {
	if slices.Contains(scopes, "all") || slices.Contains(scopes, need) {
		return true
	}
	kind, area, _ := strings.Cut(need, ":")
	return kind == "read" && slices.Contains(scopes, "write:"+area)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.Received = append(s.Received, Request{Method: r.Method, Host: r.Host, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), OTP: r.Header.Get("X-Gitea-OTP"), Body: string(body)})
	n := len(s.Received)
	fault := s.Fault
	s.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	if s.MaxBody > 0 && len(body) > s.MaxBody {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprint(w, "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>\n")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path := r.URL.EscapedPath()
	if path == "/api/v1/version" && r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, map[string]string{"version": s.Version})
		return
	}
	actor, scopes, readOnly, ok := s.who(r)
	if !ok {
		// A request without a credential reaches a public repository's reads on Gitea;
		// the stand-in's repository is private, so it answers every request as Gitea
		// answers a wrong token.
		s.fail(w, http.StatusUnauthorized, errTokenInvalid)
		return
	}
	write := r.Method != http.MethodGet
	if path == "/api/v1/user" && r.Method == http.MethodGet {
		if !s.scoped(w, scopes, "read:user") {
			return
		}
		writeJSON(w, http.StatusOK, actor)
		return
	}
	m := repoPath.FindStringSubmatch(path)
	if m == nil {
		s.fail(w, http.StatusNotFound, errNotFound)
		return
	}
	if !strings.EqualFold(m[1], s.Owner) || !strings.EqualFold(m[2], s.Name) {
		s.fail(w, http.StatusNotFound, errNotFound)
		return
	}
	rest := m[3]
	area := "issue"
	if statusPath.MatchString(rest) {
		area = "repository"
	}
	need := "read:" + area
	if write {
		need = "write:" + area
	}
	if !s.scoped(w, scopes, need) {
		return
	}
	if write && readOnly {
		// A fork's pull request gets a read-only job token, whatever the workflow asks.
		s.fail(w, http.StatusForbidden, "user should have specific permission or be a site admin")
		return
	}
	var req map[string]any
	if len(body) > 0 && json.Unmarshal(body, &req) != nil {
		s.fail(w, http.StatusUnprocessableEntity, "[]: the body is not JSON")
		return
	}
	if write {
		s.Writes++
	}
	str := func(k string) (string, bool) { v, ok := req[k].(string); return v, ok }
	num := func(re *regexp.Regexp) int64 {
		v, _ := strconv.ParseInt(re.FindStringSubmatch(rest)[1], 10, 64)
		return v
	}
	switch {
	case issueComments.MatchString(rest) && r.Method == http.MethodGet:
		is := s.Issues[num(issueComments)]
		if is == nil {
			// GetIssueByIndex's error is answered as a server error.
			s.fail(w, http.StatusInternalServerError, "")
			return
		}
		// Gitea lists an issue's comments whole: no page or limit is read.
		out := []*Comment{}
		out = append(out, s.comments[is.Number]...)
		w.Header().Set("X-Total-Count", strconv.Itoa(len(out)))
		writeJSON(w, http.StatusOK, out)
	case issueComments.MatchString(rest) && r.Method == http.MethodPost:
		is := s.Issues[num(issueComments)]
		if is == nil {
			s.fail(w, http.StatusInternalServerError, "")
			return
		}
		b, _ := str("body")
		if strings.TrimSpace(b) == "" {
			s.fail(w, http.StatusUnprocessableEntity, "[Body]: Required")
			return
		}
		writeJSON(w, http.StatusCreated, s.addComment(is.Number, actor, b))
	case issueComment.MatchString(rest) && r.Method == http.MethodPatch:
		id := num(issueComment)
		for _, list := range s.comments {
			for _, c := range list {
				if c.ID != id {
					continue
				}
				// Gitea lets the author, and anyone who can write issues, edit a comment.
				b, _ := str("body")
				c.Body, c.UpdatedAt = b, s.now()
				writeJSON(w, http.StatusOK, c)
				return
			}
		}
		s.fail(w, http.StatusNotFound, "comment does not exist [id: "+strconv.FormatInt(id, 10)+"]")
	case issuesList.MatchString(rest) && r.Method == http.MethodGet:
		s.listIssues(w, r)
	case issuesList.MatchString(rest) && r.Method == http.MethodPost:
		title, _ := str("title")
		if strings.TrimSpace(title) == "" {
			s.fail(w, http.StatusUnprocessableEntity, "[Title]: Required")
			return
		}
		var labels []Label
		ids, _ := req["labels"].([]any)
		for _, v := range ids {
			id, _ := v.(float64)
			var found *Label
			for _, l := range s.Labels {
				if l.ID == int64(id) {
					found = l
				}
			}
			if found == nil {
				s.fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("label does not exist [label_id: %d]", int64(id)))
				return
			}
			labels = append(labels, *found)
		}
		b, _ := str("body")
		is := s.newIssue(actor, title, b)
		is.Labels = append(is.Labels, labels...)
		writeJSON(w, http.StatusCreated, is)
	case issueOne.MatchString(rest) && r.Method == http.MethodPatch:
		is := s.Issues[num(issueOne)]
		if is == nil {
			s.fail(w, http.StatusNotFound, errNotFound)
			return
		}
		if v, ok := str("title"); ok && v != "" {
			is.Title = v
		}
		if v, ok := str("body"); ok {
			is.Body = v
		}
		switch st, _ := str("state"); st {
		case "closed":
			t := s.now()
			is.State, is.ClosedAt = "closed", &t
		case "open":
			is.State, is.ClosedAt = "open", nil
		}
		is.UpdatedAt = s.now()
		// Gitea answers an edited issue with 201.
		writeJSON(w, http.StatusCreated, is)
	case labelsList.MatchString(rest) && r.Method == http.MethodGet:
		s.page(w, r, s.Labels)
	case labelsList.MatchString(rest) && r.Method == http.MethodPost:
		name, _ := str("name")
		color, _ := str("color")
		c := labelColor.FindStringSubmatch(color)
		if strings.TrimSpace(name) == "" || c == nil {
			s.fail(w, http.StatusUnprocessableEntity, "[Name Color]: Required")
			return
		}
		d, _ := str("description")
		writeJSON(w, http.StatusCreated, s.newLabel(name, strings.ToLower(c[1]), d))
	case statusPath.MatchString(rest) && r.Method == http.MethodPost:
		s.setStatus(w, req, statusPath.FindStringSubmatch(rest)[1], actor)
	default:
		s.fail(w, http.StatusMethodNotAllowed, "")
	}
}

// scoped answers 403 as Gitea's tokenRequiresScopes does when the token lacks need.
func (s *Server) scoped(w http.ResponseWriter, scopes []string, need string) bool {
	if hasScope(scopes, need) {
		return true
	}
	s.fail(w, http.StatusForbidden, fmt.Sprintf("token does not have at least one of required scope(s), required=[%s], token scope=%s", need, strings.Join(scopes, ",")))
	return false
}

// setStatus is POST /repos/{owner}/{repo}/statuses/{sha}: Gitea reads the commit
// first (a SHA the repository does not hold fails there, answered as a server error
// whose message a production instance hides), takes state pending, success, error,
// failure or warning, and keeps target_url, description and context as they are
// (TEXT columns, no length checked).
func (s *Server) setStatus(w http.ResponseWriter, req map[string]any, sha string, actor User) {
	str := func(k string) string { v, _ := req[k].(string); return v }
	if !s.commits[sha] {
		s.fail(w, http.StatusInternalServerError, "")
		return
	}
	state := str("state")
	switch state {
	case "pending", "success", "error", "failure", "warning":
	default:
		s.fail(w, http.StatusUnprocessableEntity, "[State]: invalid commit status state")
		return
	}
	now := s.now()
	st := Status{ID: int64(len(s.Statuses) + 1), SHA: sha, State: state, TargetURL: str("target_url"), Description: str("description"),
		Context: str("context"), Creator: s.Actor, CreatedAt: now, UpdatedAt: now,
		URL: fmt.Sprintf("%s/api/v1/repos/%s/%s/statuses/%s", s.URL, s.Owner, s.Name, sha)}
	st.Creator = actor
	s.Statuses = append(s.Statuses, st)
	writeJSON(w, http.StatusCreated, st)
}

// listIssues is GET /repos/{owner}/{repo}/issues: state open (the default), closed or
// all; type issues or pulls (both when empty); labels, names separated by commas, all
// of which an issue must carry; newest first; paginated.
func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	out := []*Issue{}
	numbers := make([]int64, 0, len(s.Issues))
	for n := range s.Issues {
		numbers = append(numbers, n)
	}
	sort.Slice(numbers, func(i, j int) bool { return numbers[i] > numbers[j] })
	for _, n := range numbers {
		is := s.Issues[n]
		if (state != "all" && is.State != state) || (q.Get("type") == "issues" && is.PullRequest != nil) || (q.Get("type") == "pulls" && is.PullRequest == nil) {
			continue
		}
		has := 0
		for _, name := range want {
			if slices.ContainsFunc(is.Labels, func(l Label) bool { return l.Name == name }) {
				has++
			}
		}
		if has == len(want) {
			out = append(out, is)
		}
	}
	s.page(w, r, out)
}

// page writes one page of items as Gitea does: page (from 1) and limit (default
// PageDefault, at most PageMax), X-Total-Count, and a Link header of absolute URLs
// on the instance's ROOT_URL with rel next, last, first and prev, as
// APIContext.SetLinkHeader writes them.
func page[T any](s *Server, w http.ResponseWriter, r *http.Request, items []T) {
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = s.PageDefault
	}
	limit = min(limit, s.PageMax)
	p, _ := strconv.Atoi(q.Get("page"))
	if p <= 0 {
		p = 1
	}
	if items == nil {
		items = []T{}
	}
	total := len(items)
	pages := max((total+limit-1)/limit, 1)
	start := min((p-1)*limit, total)
	end := min(start+limit, total)
	link := func(to int, rel string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(to))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.URL, r.URL.EscapedPath(), v.Encode(), rel)
	}
	var links []string
	if p < pages {
		links = append(links, link(p+1, "next"))
	}
	if p != pages {
		links = append(links, link(pages, "last"))
	}
	if p != 1 {
		links = append(links, link(1, "first"))
	}
	if p > 1 {
		links = append(links, link(p-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ","))
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, items[start:end])
}

func (s *Server) page(w http.ResponseWriter, r *http.Request, items any) {
	switch v := items.(type) {
	case []*Issue:
		page(s, w, r, v)
	case []*Label:
		page(s, w, r, v)
	}
}
