// Package githubtest is a local stand-in for the parts of GitHub's REST API drift
// uses: the token's user, issue comments (list with pagination, create, update,
// delete), issues and labels, check runs and commit statuses. It keeps state, records
// requests with the host and the credentials each got, checks the token, answers as
// the token's identity (a user, or an installation's bot that GET /user refuses), and
// can be told to answer with faults, so the publisher is tested against the API's
// shapes.
package githubtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// User is a GitHub account as the API shows it on comments and issues.
type User struct {
	Login string `json:"login"`
	Type  string `json:"type"` // User or Bot
}

// ActionsBot is who GITHUB_TOKEN, an installation token, writes as.
var ActionsBot = User{Login: "github-actions[bot]", Type: "Bot"}

// Someone is another user of the repository.
var Someone = User{Login: "someone", Type: "User"}

// Comment is an issue comment.
type Comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User User   `json:"user"`
}

// Request is one request as the server received it.
type Request struct {
	Method, Host, Path string
	// Authorization is the header as received ("" when none).
	Authorization string
	// Body is the request body as received.
	Body string
}

// Server is the stand-in. Its fields are safe to read after requests are done.
type Server struct {
	*httptest.Server
	Token string
	// Actor is whom the token belongs to (ActionsBot unless set before requests). A
	// Bot is an installation token: GET /user refuses it, as GitHub does.
	Actor User

	mu       sync.Mutex
	nextID   int64
	comments map[int][]*Comment // by issue number
	// CheckRuns and Statuses hold the bodies received.
	CheckRuns []map[string]any
	Statuses  []map[string]any
	// Requests lists "METHOD path" of every request.
	Requests []string
	// Received lists every request with its host and credentials.
	Received []Request
	// Fault, when set, may answer a request instead of the server (return true).
	Fault func(w http.ResponseWriter, r *http.Request, n int) bool
	// MaxBody is GitHub's limit on a comment body (65,536 characters).
	MaxBody int
	// Issues and Labels hold the repository's issues and labels.
	Issues map[int]*Issue
	Labels map[string]bool
	// Writes counts requests that change something.
	Writes int
}

// Issue is a repository issue.
type Issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	User   User   `json:"user"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

var (
	commentsPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$`)
	commentPath  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$`)
	checkRuns    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs$`)
	statuses     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/statuses/([0-9a-f]+)$`)
	issuesPath   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues$`)
	issuePath    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/(\d+)$`)
	labelsPath   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/labels(?:/([^/]+))?$`)
	userPath     = regexp.MustCompile(`^/user$`)
)

// New starts a server for repository owner/repo that accepts token.
func New(token string) *Server {
	s := &Server{Token: token, Actor: ActionsBot, comments: map[int][]*Comment{}, nextID: 1000, MaxBody: 65536, Issues: map[int]*Issue{}, Labels: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Comments returns the comments of an issue, in order.
func (s *Server) Comments(issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments[issue] {
		out = append(out, *c)
	}
	return out
}

// AddComment adds a comment as another user (Someone) would.
func (s *Server) AddComment(issue int, body string) int64 {
	return s.AddCommentBy(issue, Someone, body)
}

// AddCommentBy adds a comment written by user.
func (s *Server) AddCommentBy(issue int, user User, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c := &Comment{ID: s.nextID, Body: body, User: user}
	s.comments[issue] = append(s.comments[issue], c)
	return c.ID
}

// DeleteComment removes a comment as a person would.
func (s *Server) DeleteComment(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for issue, cs := range s.comments {
		for i, c := range cs {
			if c.ID == id {
				s.comments[issue] = append(cs[:i:i], cs[i+1:]...)
				return
			}
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.Requests = append(s.Requests, r.Method+" "+r.URL.Path)
	s.Received = append(s.Received, Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: string(body)})
	n := len(s.Requests)
	fault := s.Fault
	s.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		fail(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	w.Header().Set("X-RateLimit-Remaining", "4999")
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet {
		s.Writes++
	}
	switch {
	case userPath.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		if s.Actor.Type == "Bot" {
			fail(w, http.StatusForbidden, "Resource not accessible by integration")
			return
		}
		writeJSON(w, http.StatusOK, s.Actor)
	case issuesPath.MatchString(r.URL.Path):
		s.issues(w, r)
	case issuePath.MatchString(r.URL.Path):
		n, _ := strconv.Atoi(issuePath.FindStringSubmatch(r.URL.Path)[3])
		is := s.Issues[n]
		if is == nil || r.Method != http.MethodPatch {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		if v, ok := req["title"].(string); ok {
			is.Title = v
		}
		if v, ok := req["body"].(string); ok {
			is.Body = v
		}
		if v, ok := req["state"].(string); ok {
			is.State = v
		}
		writeJSON(w, http.StatusOK, is)
	case labelsPath.MatchString(r.URL.Path):
		name := labelsPath.FindStringSubmatch(r.URL.Path)[3]
		switch {
		case r.Method == http.MethodGet && name != "":
			if !s.Labels[name] {
				fail(w, http.StatusNotFound, "Not Found")
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"name": name})
		case r.Method == http.MethodPost && name == "":
			var l map[string]any
			_ = json.NewDecoder(r.Body).Decode(&l)
			n, _ := l["name"].(string)
			s.Labels[n] = true
			writeJSON(w, http.StatusCreated, l)
		default:
			fail(w, http.StatusNotFound, "Not Found")
		}
	case commentsPath.MatchString(r.URL.Path):
		issue, _ := strconv.Atoi(commentsPath.FindStringSubmatch(r.URL.Path)[3])
		switch r.Method {
		case http.MethodGet:
			s.listComments(w, r, issue)
		case http.MethodPost:
			var c Comment
			if json.NewDecoder(r.Body).Decode(&c) != nil || c.Body == "" {
				fail(w, http.StatusUnprocessableEntity, "Validation Failed")
				return
			}
			if len([]rune(c.Body)) > s.MaxBody {
				fail(w, http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
				return
			}
			s.nextID++
			c.ID = s.nextID
			c.User = s.Actor
			s.comments[issue] = append(s.comments[issue], &c)
			writeJSON(w, http.StatusCreated, c)
		default:
			fail(w, http.StatusMethodNotAllowed, "Method not allowed")
		}
	case commentPath.MatchString(r.URL.Path):
		id, _ := strconv.ParseInt(commentPath.FindStringSubmatch(r.URL.Path)[3], 10, 64)
		var found *Comment
		for _, cs := range s.comments {
			for _, c := range cs {
				if c.ID == id {
					found = c
				}
			}
		}
		if found == nil {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		if r.Method != http.MethodPatch {
			fail(w, http.StatusMethodNotAllowed, "Method not allowed")
			return
		}
		var c Comment
		if json.NewDecoder(r.Body).Decode(&c) != nil {
			fail(w, http.StatusBadRequest, "Problems parsing JSON")
			return
		}
		if len([]rune(c.Body)) > s.MaxBody {
			fail(w, http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
			return
		}
		found.Body = c.Body
		writeJSON(w, http.StatusOK, found)
	case checkRuns.MatchString(r.URL.Path) && r.Method == http.MethodPost:
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		// GitHub refuses an output summary or text over 65,535 characters.
		if out, ok := body["output"].(map[string]any); ok {
			for _, f := range []string{"summary", "text"} {
				if v, _ := out[f].(string); len([]rune(v)) > MaxCheckOutput {
					fail(w, http.StatusUnprocessableEntity, "Invalid request.\n\nOnly 65535 characters are allowed; "+strconv.Itoa(len([]rune(v)))+" were supplied.")
					return
				}
			}
		}
		s.CheckRuns = append(s.CheckRuns, body)
		writeJSON(w, http.StatusCreated, map[string]any{"id": len(s.CheckRuns), "name": body["name"]})
	case statuses.MatchString(r.URL.Path) && r.Method == http.MethodPost:
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		s.Statuses = append(s.Statuses, body)
		writeJSON(w, http.StatusCreated, body)
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}

// listComments pages as GitHub does, with a Link header.
func (s *Server) listComments(w http.ResponseWriter, r *http.Request, issue int) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	all := s.comments[issue]
	start := min((page-1)*per, len(all))
	end := min(start+per, len(all))
	if end < len(all) {
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?per_page=%d&page=%d>; rel="next"`, s.URL, r.URL.Path, per, page+1))
	}
	out := make([]*Comment, 0, end-start)
	out = append(out, all[start:end]...)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) issues(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		label := r.URL.Query().Get("labels")
		state := r.URL.Query().Get("state")
		out := []*Issue{}
		for n := 1; n <= len(s.Issues); n++ {
			is := s.Issues[n]
			if is == nil || (state != "all" && state != "" && is.State != state) || (state == "" && is.State != "open") {
				continue
			}
			has := label == ""
			for _, l := range is.Labels {
				has = has || l.Name == label
			}
			if has {
				out = append(out, is)
			}
		}
		writeJSON(w, http.StatusOK, out)
	case http.MethodPost:
		var req struct {
			Title  string   `json:"title"`
			Body   string   `json:"body"`
			Labels []string `json:"labels"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Title == "" {
			fail(w, http.StatusUnprocessableEntity, "Validation Failed")
			return
		}
		is := &Issue{Number: len(s.Issues) + 1, Title: req.Title, Body: req.Body, State: "open", User: s.Actor}
		for _, l := range req.Labels {
			if !s.Labels[l] {
				fail(w, http.StatusUnprocessableEntity, "Validation Failed: label does not exist")
				return
			}
			is.Labels = append(is.Labels, struct {
				Name string `json:"name"`
			}{l})
		}
		s.Issues[is.Number] = is
		writeJSON(w, http.StatusCreated, is)
	default:
		fail(w, http.StatusMethodNotAllowed, "Method not allowed")
	}
}

// MaxCheckOutput is GitHub's limit on a check run's output summary and text.
const MaxCheckOutput = 65535
