// Package gitlabtest is a local stand-in for the parts of GitLab's REST API v4 drift
// uses, in GitLab's shapes: the token's user (/user), merge request notes (listed
// with X-Page/X-Next-Page/X-Total-Pages pagination and a Link header, newest first
// unless asked otherwise, created, updated; system notes among them), commit
// statuses (in the project's pipelines, validated as GitLab validates them), issues
// and their notes, project labels, GitLab's errors ({"message": ...}), RateLimit-*
// headers and the note length limit. It keeps state, records every request with its
// host and the credentials it carried, answers as the token's user, records the quick
// actions GitLab would run from a note, and can be told to answer with faults.
package gitlabtest

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
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// User is a GitLab user as the API shows it on notes and issues.
type User struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Name     string `json:"name"`
	State    string `json:"state"`
	Bot      bool   `json:"bot,omitempty"`
}

// ProjectBot is the user a project access token belongs to, as GitLab names it.
var ProjectBot = User{ID: 9001, Username: "project_42_bot_3f2a9c", Name: "drift", State: "active", Bot: true}

// Someone is another member of the project.
var Someone = User{ID: 17, Username: "someone", Name: "Some One", State: "active"}

// Note is a note on a merge request or an issue.
type Note struct {
	ID           int64     `json:"id"`
	Body         string    `json:"body"`
	Author       User      `json:"author"`
	System       bool      `json:"system"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	NoteableType string    `json:"noteable_type"`
	NoteableIID  int64     `json:"noteable_iid"`
	ProjectID    int64     `json:"project_id"`
	Internal     bool      `json:"internal"`
}

// Issue is a project issue.
type Issue struct {
	ID          int64    `json:"id"`
	IID         int64    `json:"iid"`
	ProjectID   int64    `json:"project_id"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	State       string   `json:"state"` // opened or closed
	Author      User     `json:"author"`
	Labels      []string `json:"labels"`
	WebURL      string   `json:"web_url"`
}

// Pipeline is a pipeline of the project: the commit it runs, its ref and the names of
// its jobs.
type Pipeline struct {
	ID   int64
	SHA  string
	Ref  string
	Jobs []string
}

// Request is one request as the server received it.
type Request struct {
	Method, Host, Path string
	// The credentials it carried ("" when none).
	PrivateToken, JobToken, Authorization string
	Body                                  string
}

// Server is the stand-in for one project. Its fields are safe to read after
// requests are done.
type Server struct {
	*httptest.Server
	Token string
	// ProjectID and ProjectPath name the project (either finds it).
	ProjectID   int64
	ProjectPath string
	// Actor is whom the token belongs to.
	Actor User
	// MaxNote is GitLab's limit on a note's body, in characters.
	MaxNote int
	// Fault, when set, may answer a request instead of the server (return true).
	Fault func(w http.ResponseWriter, r *http.Request, n int) bool

	mu     sync.Mutex
	nextID int64
	notes  map[int64][]*Note // merge request notes by IID
	// IssueNotes are the notes of issues, by IID.
	IssueNotes map[int64][]*Note
	// Statuses holds the commit statuses set, with the SHA under "sha" and the pipeline
	// GitLab put it in under "pipeline_id".
	Statuses []map[string]any
	// Pipelines are the project's pipelines by ID (AddPipeline).
	Pipelines map[int64]*Pipeline
	// Issues and Labels hold the project's issues (by IID) and labels.
	Issues map[int64]*Issue
	Labels map[string]bool
	// Received lists every request; Writes counts those that change something.
	Received []Request
	Writes   int
	// QuickActions lists the quick actions (/close, /merge, ...) GitLab would have run
	// from the notes and descriptions drift wrote.
	QuickActions []string
}

// New starts a server for project 42 (acme/gitops) that accepts token as a project
// access token of ProjectBot.
func New(token string) *Server {
	s := &Server{Token: token, ProjectID: 42, ProjectPath: "acme/gitops", Actor: ProjectBot, MaxNote: 1000000, nextID: 5000,
		notes: map[int64][]*Note{}, IssueNotes: map[int64][]*Note{}, Issues: map[int64]*Issue{}, Labels: map[string]bool{},
		Pipelines: map[int64]*Pipeline{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// AddPipeline adds a pipeline that runs sha for ref (refs/merge-requests/7/head, or
// /merge in a merged results pipeline), with jobs of those names.
func (s *Server) AddPipeline(id int64, sha, ref string, jobs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Pipelines[id] = &Pipeline{ID: id, SHA: sha, Ref: ref, Jobs: jobs}
}

// Notes returns a merge request's notes, oldest first.
func (s *Server) Notes(mr int64) []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Note
	for _, n := range s.notes[mr] {
		out = append(out, *n)
	}
	return out
}

// AddNote adds a note to a merge request as user would (system marks GitLab's own).
func (s *Server) AddNote(mr int64, user User, body string, system bool) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addNote(s.notes, mr, user, body, system, "MergeRequest").ID
}

// DeleteNote removes a note as a person would.
func (s *Server) DeleteNote(mr, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range s.notes[mr] {
		if n.ID == id {
			s.notes[mr] = append(s.notes[mr][:i:i], s.notes[mr][i+1:]...)
			return
		}
	}
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

func (s *Server) addNote(in map[int64][]*Note, iid int64, user User, body string, system bool, kind string) *Note {
	s.nextID++
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s.nextID) * time.Second)
	n := &Note{ID: s.nextID, Body: body, Author: user, System: system, CreatedAt: now, UpdatedAt: now, NoteableType: kind, NoteableIID: iid, ProjectID: s.ProjectID}
	in[iid] = append(in[iid], n)
	return n
}

var (
	userPath      = regexp.MustCompile(`^/api/v4/user$`)
	mrNotesPath   = regexp.MustCompile(`^/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes$`)
	mrNotePath    = regexp.MustCompile(`^/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes/(\d+)$`)
	statusPath    = regexp.MustCompile(`^/api/v4/projects/([^/]+)/statuses/([0-9a-f]{7,64})$`)
	issuesPath    = regexp.MustCompile(`^/api/v4/projects/([^/]+)/issues$`)
	issuePath     = regexp.MustCompile(`^/api/v4/projects/([^/]+)/issues/(\d+)$`)
	issueNotePath = regexp.MustCompile(`^/api/v4/projects/([^/]+)/issues/(\d+)/notes$`)
	labelsPath    = regexp.MustCompile(`^/api/v4/projects/([^/]+)/labels(?:/([^/]+))?$`)
	// quickAction is a line GitLab runs as a quick action: a slash at the start of a
	// line, then a command's name. GitLab skips only plain ``` fences, quotes (>>>)
	// and HTML blocks of a certain shape; the stand-in counts every such line.
	quickAction = regexp.MustCompile(`(?m)^/([A-Za-z_]+)`)
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers as GitLab does: {"message": "404 Not found"} and the like.
func fail(w http.ResponseWriter, code int, msg any) {
	writeJSON(w, code, map[string]any{"message": msg})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.Received = append(s.Received, Request{Method: r.Method, Host: r.Host, Path: r.URL.EscapedPath(), PrivateToken: r.Header.Get("Private-Token"),
		JobToken: r.Header.Get("Job-Token"), Authorization: r.Header.Get("Authorization"), Body: string(body)})
	n := len(s.Received)
	fault := s.Fault
	s.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	if r.Header.Get("Private-Token") != s.Token && r.Header.Get("Authorization") != "Bearer "+s.Token {
		fail(w, http.StatusUnauthorized, "401 Unauthorized")
		return
	}
	w.Header().Set("RateLimit-Limit", "2000")
	w.Header().Set("RateLimit-Observed", "1")
	w.Header().Set("RateLimit-Remaining", "1999")
	w.Header().Set("RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet {
		s.Writes++
	}
	path := r.URL.EscapedPath()
	if userPath.MatchString(path) {
		writeJSON(w, http.StatusOK, s.Actor)
		return
	}
	var m []string
	for _, re := range []*regexp.Regexp{mrNotesPath, mrNotePath, statusPath, issuesPath, issuePath, issueNotePath, labelsPath} {
		if m = re.FindStringSubmatch(path); m != nil {
			if !s.isProject(m[1]) {
				fail(w, http.StatusNotFound, "404 Project Not Found")
				return
			}
			break
		}
	}
	if m == nil {
		fail(w, http.StatusNotFound, "404 Not Found")
		return
	}
	var req map[string]any
	if len(body) > 0 && json.Unmarshal(body, &req) != nil {
		fail(w, http.StatusBadRequest, "400 Bad request - the body is not JSON")
		return
	}
	str := func(k string) (string, bool) { v, ok := req[k].(string); return v, ok }
	num := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
	switch {
	case mrNotesPath.MatchString(path) && r.Method == http.MethodGet:
		s.page(w, r, s.sortNotes(s.notes[num(2)], r.URL.Query()))
	case mrNotesPath.MatchString(path) && r.Method == http.MethodPost:
		b, _ := str("body")
		if !s.noteOK(w, b) {
			return
		}
		writeJSON(w, http.StatusCreated, s.addNote(s.notes, num(2), s.Actor, b, false, "MergeRequest"))
	case mrNotePath.MatchString(path) && r.Method == http.MethodPut:
		b, _ := str("body")
		for _, n := range s.notes[num(2)] {
			if n.ID == num(3) {
				if n.Author.ID != s.Actor.ID {
					fail(w, http.StatusForbidden, "403 Forbidden")
					return
				}
				if !s.noteOK(w, b) {
					return
				}
				n.Body = b
				writeJSON(w, http.StatusOK, n)
				return
			}
		}
		fail(w, http.StatusNotFound, "404 Not found")
	case statusPath.MatchString(path) && r.Method == http.MethodPost:
		s.setStatus(w, req, m[2])
	case issuesPath.MatchString(path) && r.Method == http.MethodGet:
		s.listIssues(w, r)
	case issuesPath.MatchString(path) && r.Method == http.MethodPost:
		title, _ := str("title")
		if title == "" {
			fail(w, http.StatusBadRequest, "title is missing")
			return
		}
		desc, _ := str("description")
		if !s.noteOK(w, desc) {
			return
		}
		is := &Issue{ID: 70000 + int64(len(s.Issues)+1), IID: int64(len(s.Issues) + 1), ProjectID: s.ProjectID, Title: title, Description: desc,
			State: "opened", Author: s.Actor, Labels: []string{}}
		if l, _ := str("labels"); l != "" {
			for _, name := range strings.Split(l, ",") {
				// GitLab creates a label an issue is given that does not exist yet.
				s.Labels[name] = true
				is.Labels = append(is.Labels, name)
			}
		}
		is.WebURL = fmt.Sprintf("%s/%s/-/issues/%d", s.URL, s.ProjectPath, is.IID)
		s.Issues[is.IID] = is
		writeJSON(w, http.StatusCreated, is)
	case issuePath.MatchString(path) && r.Method == http.MethodPut:
		is := s.Issues[num(2)]
		if is == nil {
			fail(w, http.StatusNotFound, "404 Not found")
			return
		}
		if v, ok := str("title"); ok {
			is.Title = v
		}
		if v, ok := str("description"); ok {
			if !s.noteOK(w, v) {
				return
			}
			is.Description = v
		}
		switch ev, _ := str("state_event"); ev {
		case "close":
			is.State = "closed"
		case "reopen":
			is.State = "opened"
		}
		writeJSON(w, http.StatusOK, is)
	case issueNotePath.MatchString(path) && r.Method == http.MethodPost:
		if s.Issues[num(2)] == nil {
			fail(w, http.StatusNotFound, "404 Not found")
			return
		}
		b, _ := str("body")
		if !s.noteOK(w, b) {
			return
		}
		writeJSON(w, http.StatusCreated, s.addNote(s.IssueNotes, num(2), s.Actor, b, false, "Issue"))
	case labelsPath.MatchString(path):
		name, _ := url.PathUnescape(m[2])
		switch {
		case r.Method == http.MethodGet && name != "":
			if !s.Labels[name] {
				fail(w, http.StatusNotFound, "404 Label Not Found")
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"id": 1, "name": name, "color": "#d93f0b"})
		case r.Method == http.MethodPost && name == "":
			n, _ := str("name")
			if n == "" {
				fail(w, http.StatusBadRequest, "name is missing")
				return
			}
			if s.Labels[n] {
				fail(w, http.StatusConflict, "Label already exists")
				return
			}
			s.Labels[n] = true
			writeJSON(w, http.StatusCreated, req)
		default:
			fail(w, http.StatusNotFound, "404 Not Found")
		}
	default:
		fail(w, http.StatusMethodNotAllowed, "405 Method Not Allowed")
	}
}

// maxStatusField is what GitLab's CommitStatus keeps of a status's target_url and
// description, in characters.
const maxStatusField = 255

// setStatus is POST /projects/:id/statuses/:sha as Ci::CreateCommitStatusService
// answers it: a pipeline_id must be a pipeline that runs sha (and ref, when given),
// else 404; without one, the newest pipeline of sha (and ref) takes the status, else
// an external pipeline is made. The status is then validated as GenericCommitStatus
// is (target_url an http(s) URL, target_url and description at most 255 characters,
// a name no job of the pipeline has), each failure a 400 whose message maps the field
// to its errors. The stand-in does not know which branches hold a commit, so it never
// answers GitLab's 404 "References for commit".
func (s *Server) setStatus(w http.ResponseWriter, req map[string]any, sha string) {
	str := func(k string) (string, bool) { v, ok := req[k].(string); return v, ok }
	state, ok := str("state")
	if !ok {
		fail(w, http.StatusBadRequest, "state is missing")
		return
	}
	switch state {
	case "pending", "running", "success", "failed", "canceled", "skipped":
	default:
		fail(w, http.StatusBadRequest, "state does not have a valid value")
		return
	}
	ref, hasRef := str("ref")
	var pipeline *Pipeline
	if id, given := req["pipeline_id"]; given {
		n, _ := id.(float64)
		p := s.Pipelines[int64(n)]
		if p == nil || p.SHA != sha || (hasRef && p.Ref != ref) {
			fail(w, http.StatusNotFound, "404 Pipeline for pipeline_id, sha and ref Not Found")
			return
		}
		pipeline = p
	} else {
		for _, p := range s.Pipelines {
			if p.SHA == sha && (!hasRef || p.Ref == ref) && (pipeline == nil || p.ID > pipeline.ID) {
				pipeline = p
			}
		}
		if pipeline == nil {
			id := int64(1)
			for existing := range s.Pipelines {
				id = max(id, existing+1)
			}
			pipeline = &Pipeline{ID: id, SHA: sha, Ref: ref}
			s.Pipelines[id] = pipeline
		}
	}
	name, _ := str("name")
	if name == "" {
		name, _ = str("context")
	}
	if name == "" {
		name = "default"
	}
	invalid := map[string][]string{}
	if u, ok := str("target_url"); ok {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") {
			invalid["target_url"] = append(invalid["target_url"], "is blocked: Only allowed schemes are http, https")
		}
		if utf8.RuneCountInString(u) > maxStatusField {
			invalid["target_url"] = append(invalid["target_url"], fmt.Sprintf("is too long (maximum is %d characters)", maxStatusField))
		}
	}
	if d, _ := str("description"); utf8.RuneCountInString(d) > maxStatusField {
		invalid["description"] = append(invalid["description"], fmt.Sprintf("is too long (maximum is %d characters)", maxStatusField))
	}
	if slices.Contains(pipeline.Jobs, name) {
		invalid["name"] = append(invalid["name"], "has already been taken")
	}
	if len(invalid) > 0 {
		fail(w, http.StatusBadRequest, invalid)
		return
	}
	req["sha"], req["pipeline_id"] = sha, float64(pipeline.ID)
	s.Statuses = append(s.Statuses, req)
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(s.Statuses), "sha": sha, "ref": pipeline.Ref, "status": state, "name": name,
		"author": s.Actor, "target_url": req["target_url"], "description": req["description"], "pipeline_id": pipeline.ID, "allow_failure": false})
}

// isProject says whether id is the project's ID or its URL-encoded path.
func (s *Server) isProject(id string) bool {
	p, err := url.PathUnescape(id)
	return err == nil && (p == strconv.FormatInt(s.ProjectID, 10) || p == s.ProjectPath)
}

// noteOK refuses a body over GitLab's limit as GitLab does (400), and records the
// quick actions GitLab would run from it.
func (s *Server) noteOK(w http.ResponseWriter, body string) bool {
	if len([]rune(body)) > s.MaxNote {
		fail(w, http.StatusBadRequest, fmt.Sprintf("400 Bad request - Note {:note=>[\"is too long (maximum is %d characters)\"]}", s.MaxNote))
		return false
	}
	for _, m := range quickAction.FindAllStringSubmatch(body, -1) {
		s.QuickActions = append(s.QuickActions, m[1])
	}
	return true
}

// sortNotes orders notes as GitLab does: by created_at (or updated_at), newest first
// unless sort=asc.
func (s *Server) sortNotes(notes []*Note, q url.Values) []*Note {
	out := append([]*Note(nil), notes...)
	if q.Get("sort") != "asc" {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// page writes one page of items with GitLab's pagination headers (default 20 a page,
// at most 100).
func (s *Server) page(w http.ResponseWriter, r *http.Request, items any) {
	all, _ := json.Marshal(items)
	var list []json.RawMessage
	_ = json.Unmarshal(all, &list)
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 20
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	total := len(list)
	pages := max((total+per-1)/per, 1)
	start := min((page-1)*per, total)
	end := min(start+per, total)
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(total))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	h.Set("X-Prev-Page", "")
	link := func(p int, rel string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.URL, r.URL.EscapedPath(), v.Encode(), rel)
	}
	links := []string{link(1, "first"), link(pages, "last")}
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
		links = append(links, link(page+1, "next"))
	}
	if page > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(page-1))
		links = append(links, link(page-1, "prev"))
	}
	h.Set("Link", strings.Join(links, ", "))
	writeJSON(w, http.StatusOK, list[start:end])
}

// listIssues lists issues as GET /projects/:id/issues does: newest first, filtered by
// labels (all of them) and state (opened, closed, all; default all).
func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	state := q.Get("state")
	out := []*Issue{}
	for iid := int64(len(s.Issues)); iid >= 1; iid-- {
		is := s.Issues[iid]
		if is == nil || (state != "" && state != "all" && is.State != state) {
			continue
		}
		has := 0
		for _, l := range want {
			for _, il := range is.Labels {
				if il == l {
					has++
					break
				}
			}
		}
		if has == len(want) {
			out = append(out, is)
		}
	}
	s.page(w, r, out)
}
