// Package azuretest is a local stand-in for the parts of Azure DevOps' REST API drift
// uses, in Azure DevOps' shapes: resource area discovery (GET _apis/ResourceAreas)
// and the location service's OPTIONS _apis (each resource's id, route template and
// versions, which the client library builds every URL from), _apis/connectionData,
// pull request threads and their comments (all threads in one answer, as Azure
// DevOps gives them), pull request and commit statuses, and Azure Boards: WIQL, work
// items made and edited with JSON patch documents (200 a batch at most), work item
// types and their states, work item comments. Errors are Azure DevOps' JSON
// ({"$id":"1","message":...,"typeKey":...}); a comment over 150,000 characters is
// refused as Azure DevOps refuses it; a wrong token is a 401; a read-only token (a
// fork's) a 403 on writes; Boards turned off a 404. It keeps state, records every
// request with its host and credential, and can be told to answer with faults.
package azuretest

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
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
)

// Identity is a user or service identity as Azure DevOps shows it on comments and
// work items.
type Identity struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	UniqueName  string `json:"uniqueName"`
}

// BuildService is the identity System.AccessToken authenticates as.
var BuildService = Identity{ID: "3f1c7e5a-0b4d-4c11-9e2f-5a6b7c8d9e01", DisplayName: "shop Build Service (acme)", UniqueName: "Build\\3f1c7e5a-0b4d-4c11-9e2f-5a6b7c8d9e01"}

// Someone is a member of the project.
var Someone = Identity{ID: "8a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d", DisplayName: "Some One", UniqueName: "someone@acme.example"}

// Comment is a comment of a pull request thread.
type Comment struct {
	ID              int      `json:"id"`
	ParentCommentID int      `json:"parentCommentId"`
	Author          Identity `json:"author"`
	Content         string   `json:"content"`
	CommentType     string   `json:"commentType"`
	IsDeleted       bool     `json:"isDeleted,omitempty"`
	PublishedDate   string   `json:"publishedDate"`
}

// Thread is a pull request comment thread.
type Thread struct {
	ID            int       `json:"id"`
	Status        string    `json:"status,omitempty"`
	Comments      []Comment `json:"comments"`
	IsDeleted     bool      `json:"isDeleted"`
	PublishedDate string    `json:"publishedDate"`
}

// WorkItem is a work item of the project; Formats holds its multiline fields'
// formats ("markdown" or "html").
type WorkItem struct {
	ID       int               `json:"id"`
	Rev      int               `json:"rev"`
	Fields   map[string]any    `json:"fields"`
	Formats  map[string]string `json:"multilineFieldsFormat,omitempty"`
	Comments []WorkItemComment `json:"-"`
}

// WorkItemComment is a comment in a work item's discussion.
type WorkItemComment struct {
	Text, Format string
	By           Identity
}

// State is a state of a work item type, in its category.
type State struct {
	Name     string `json:"name"`
	Color    string `json:"color"`
	Category string `json:"category"`
}

// Request is one request as the server received it.
type Request struct {
	Method, Host, Path, Query string
	// Authorization is the credential it carried ("" when none).
	Authorization string
	ContentType   string
	Body          string
}

// MaxComment is Azure DevOps' limit on a pull request comment, in UTF-16 units.
const MaxComment = 150000

// Server is the stand-in for organization "acme", project "shop", repository
// "gitops". Its fields are safe to read after requests are done.
type Server struct {
	*httptest.Server
	// Token is accepted as Basic (a PAT, any user name) or Bearer (a job token).
	Token string
	// Actor is whom the token belongs to.
	Actor Identity
	// OnPremises answers GET _apis/ResourceAreas with an empty list, as Azure DevOps
	// Server does; AreaURL, when set, is the URL it names for every area.
	OnPremises bool
	AreaURL    string
	// ReadOnly refuses every write with a 403, as a fork's pull request build's token
	// is refused; NoStatusPermission refuses statuses only (no "Contribute to pull
	// requests").
	ReadOnly, NoStatusPermission bool
	// BoardsOff answers every work item request with a 404; NoBoardsPermission with
	// a 403.
	BoardsOff, NoBoardsPermission bool
	// Types are the project's work item types and their states (Basic's by default).
	Types map[string][]State
	// Fault, when set, may answer a request instead of the server (return true).
	Fault func(w http.ResponseWriter, r *http.Request, n int) bool

	mu      sync.Mutex
	threads map[int][]*Thread // by pull request
	// Statuses holds the statuses set: "pr" (the pull request's number, 0 for a
	// commit status), "sha", "state", "description", "targetUrl", "genre", "name".
	Statuses  []map[string]any
	WorkItems map[int]*WorkItem
	Received  []Request
	// Writes counts the requests that change something.
	Writes int
	nextID int
}

// New starts a server that accepts token for BuildService.
func New(token string) *Server {
	s := &Server{Token: token, Actor: BuildService, threads: map[int][]*Thread{}, WorkItems: map[int]*WorkItem{}, nextID: 0,
		Types: map[string][]State{
			"Issue": {{"To Do", "b2b2b2", "Proposed"}, {"Doing", "007acc", "InProgress"}, {"Done", "339933", "Completed"}},
			"Task":  {{"To Do", "b2b2b2", "Proposed"}, {"Doing", "007acc", "InProgress"}, {"Done", "339933", "Completed"}},
			"Epic":  {{"To Do", "b2b2b2", "Proposed"}, {"Doing", "007acc", "InProgress"}, {"Done", "339933", "Completed"}},
		}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Scrum makes the project's process Scrum's: no Issue, an Impediment whose states
// are Open (InProgress) and Closed (Completed).
func (s *Server) Scrum() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Types = map[string][]State{
		"Impediment":           {{"Open", "b2b2b2", "InProgress"}, {"Closed", "339933", "Completed"}, {"Removed", "ffffff", "Removed"}},
		"Product Backlog Item": {{"New", "b2b2b2", "Proposed"}, {"Done", "339933", "Completed"}},
	}
}

// APIURL is the organization's URL, what SYSTEM_COLLECTIONURI holds.
func (s *Server) APIURL() string { return s.URL + "/acme/" }

// Threads returns a pull request's threads, in id order.
func (s *Server) Threads(pr int) []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Thread
	for _, t := range s.threads[pr] {
		c := *t
		c.Comments = append([]Comment(nil), t.Comments...)
		out = append(out, c)
	}
	return out
}

// AddThread starts a thread on a pull request as who would; system makes it one of
// Azure DevOps' own (a vote, a push).
func (s *Server) AddThread(pr int, who Identity, content string, system bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := "text"
	if system {
		typ = "system"
	}
	return s.addThread(pr, who, content, typ, "active").ID
}

// DeleteThread deletes a thread's first comment, as its author would: Azure DevOps
// keeps the thread, marked deleted.
func (s *Server) DeleteThread(pr, id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.threads[pr] {
		if t.ID == id {
			t.IsDeleted = true
			t.Comments[0].IsDeleted = true
		}
	}
}

// AddWorkItem adds a work item as who would.
func (s *Server) AddWorkItem(who Identity, typ, title, description, tags, state string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	wi := &WorkItem{ID: s.nextID, Rev: 1, Fields: map[string]any{"System.Id": s.nextID, "System.WorkItemType": typ, "System.Title": title,
		"System.Description": description, "System.Tags": tags, "System.State": state, "System.CreatedBy": who, "System.TeamProject": "shop"},
		Formats: map[string]string{"System.Description": "markdown"}}
	s.WorkItems[wi.ID] = wi
	return wi.ID
}

func (s *Server) addThread(pr int, who Identity, content, typ, status string) *Thread {
	s.nextID++
	date := fmt.Sprintf("2026-01-01T00:%02d:%02dZ", s.nextID/60%60, s.nextID%60)
	t := &Thread{ID: s.nextID, Status: status, PublishedDate: date,
		Comments: []Comment{{ID: 1, Author: who, Content: content, CommentType: typ, PublishedDate: date}}}
	s.threads[pr] = append(s.threads[pr], t)
	return t
}

// Locations of the resources drift's client asks for (OPTIONS _apis), with the
// route templates and versions Azure DevOps answers.
var locations = []struct{ id, area, resource, route string }{
	{"e81700f7-3be2-46de-8624-2eb35882fcaa", "Location", "ResourceAreas", "_apis/{resource}/{areaId}"},
	{"00d9565f-ed9c-4a06-9a50-00e7896ccab4", "Location", "ConnectionData", "_apis/{resource}"},
	{"ab6e2e5d-a0b7-4153-b64a-a4efe0d49449", "git", "threads", "{project}/_apis/{area}/repositories/{repositoryId}/pullRequests/{pullRequestId}/{resource}/{threadId}"},
	{"965a3ec7-5ed8-455a-bdcb-835a5ea7fe7b", "git", "comments", "{project}/_apis/{area}/repositories/{repositoryId}/pullRequests/{pullRequestId}/threads/{threadId}/{resource}/{commentId}"},
	{"b5f6bb4f-8d1e-4d79-8d11-4c9172c99c35", "git", "pullRequestStatuses", "{project}/_apis/{area}/repositories/{repositoryId}/pullRequests/{pullRequestId}/statuses/{statusId}"},
	{"428dd4fb-fda5-4722-af02-9313b80305da", "git", "statuses", "{project}/_apis/{area}/repositories/{repositoryId}/commits/{commitId}/{resource}"},
	{"1a9c53f7-f243-4447-b110-35ef023636e4", "wit", "wiql", "{project}/{team}/_apis/{area}/{resource}/{id}"},
	{"908509b6-4248-4475-a1cd-829139ba419f", "wit", "workItemsBatch", "{project}/_apis/{area}/{resource}"},
	{"62d3d110-0047-428c-ad3c-4fe872c91c74", "wit", "workItems", "{project}/_apis/{area}/{resource}/${type}"},
	{"72c7ddf8-2cdc-4f60-90cd-ab71c14a399b", "wit", "workItems", "{project}/_apis/{area}/{resource}/{id}"},
	{"7c8d7a76-4a09-43e8-b5df-bd792f4ac6aa", "wit", "workItemTypes", "{project}/_apis/{area}/{resource}/{type}"},
	{"7c9d7a76-4a09-43e8-b5df-bd792f4ac6aa", "wit", "states", "{project}/_apis/{area}/workItemTypes/{type}/{resource}"},
	{"608aac0a-32e1-4493-a863-b9cf4566d257", "wit", "comments", "{project}/_apis/{area}/workItems/{workItemId}/{resource}/{commentId}"},
}

// Resource areas: location, git, work item tracking, and Graph, which Azure DevOps
// Services serves from another host.
var areas = []struct{ id, name, host string }{
	{"00d9565f-ed9c-4a06-9a50-00e7896ccab4", "Location", ""},
	{"4e080c62-fa21-4fbc-8fef-2a10a2b38049", "git", ""},
	{"5264459e-e5e0-4bd8-b118-0985e68a4ec5", "wit", ""},
	{"bb1e7ec9-e901-4b68-999a-de7012b920f8", "Graph", "https://vssps.dev.azure.com/acme/"},
}

var (
	orgPrefix   = "/acme/"
	threadsPath = regexp.MustCompile(`^/acme/([^/]+)/_apis/git/repositories/([^/]+)/pullRequests/(\d+)/threads$`)
	commentPath = regexp.MustCompile(`^/acme/([^/]+)/_apis/git/repositories/([^/]+)/pullRequests/(\d+)/threads/(\d+)/comments/(\d+)$`)
	prStatus    = regexp.MustCompile(`^/acme/([^/]+)/_apis/git/repositories/([^/]+)/pullRequests/(\d+)/statuses$`)
	commitStat  = regexp.MustCompile(`^/acme/([^/]+)/_apis/git/repositories/([^/]+)/commits/([0-9a-f]{40})/statuses$`)
	witPath     = regexp.MustCompile(`^/acme/([^/]+)/_apis/wit/(.*)$`)
	tagClause   = regexp.MustCompile(`\[System\.Tags\] CONTAINS '((?:[^']|'')*)'`)
)

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.Received = append(s.Received, Request{Method: r.Method, Host: r.Host, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type"), Body: string(body)})
	n := len(s.Received)
	fault := s.Fault
	s.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	if !s.authorized(r.Header.Get("Authorization")) {
		fail(w, http.StatusUnauthorized, "TF400813: The user '' is not authorized to access this resource.", "UnauthorizedRequestException")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	write := r.Method != http.MethodGet && r.Method != http.MethodOptions && !strings.HasSuffix(strings.ToLower(r.URL.Path), "/wiql") && !strings.HasSuffix(strings.ToLower(r.URL.Path), "/workitemsbatch")
	if write {
		s.Writes++
	}
	path, err := url.PathUnescape(r.URL.EscapedPath())
	if err != nil || !strings.HasPrefix(path, orgPrefix) {
		fail(w, http.StatusNotFound, "The controller for path '"+r.URL.Path+"' was not found or does not implement IController.", "HttpException")
		return
	}
	switch {
	case path == "/acme/_apis" && r.Method == http.MethodOptions:
		var out []map[string]any
		for _, l := range locations {
			out = append(out, map[string]any{"id": l.id, "area": l.area, "resourceName": l.resource, "routeTemplate": l.route,
				"resourceVersion": 4, "minVersion": "1.0", "maxVersion": "7.2", "releasedVersion": "7.1"})
		}
		collection(w, out)
		return
	case strings.EqualFold(path, "/acme/_apis/ResourceAreas"):
		out := []map[string]any{}
		if !s.OnPremises {
			for _, a := range areas {
				loc := s.URL + "/acme/"
				if a.host != "" {
					loc = a.host
				}
				if s.AreaURL != "" {
					loc = s.AreaURL
				}
				out = append(out, map[string]any{"id": a.id, "name": a.name, "locationUrl": loc})
			}
		}
		collection(w, out)
		return
	case strings.EqualFold(path, "/acme/_apis/ConnectionData"):
		writeJSON(w, http.StatusOK, map[string]any{
			"authenticatedUser": map[string]any{"id": s.Actor.ID, "descriptor": "Microsoft.TeamFoundation.ServiceIdentity;" + s.Actor.ID, "providerDisplayName": s.Actor.DisplayName, "isActive": true},
			"authorizedUser":    map[string]any{"id": s.Actor.ID, "providerDisplayName": s.Actor.DisplayName, "isActive": true},
			"instanceId":        "9d7a6b5c-4e3f-4a2b-9c1d-0e9f8a7b6c5d", "deploymentType": "hosted",
		})
		return
	}
	if m := witPath.FindStringSubmatch(path); m != nil {
		if !s.isProject(m[1]) {
			fail(w, http.StatusNotFound, "VS800075: The project with id '"+m[1]+"' does not exist, or you do not have permission to access it.", "ProjectDoesNotExistWithNameException")
			return
		}
		s.boards(w, r, m[2], body)
		return
	}
	for _, re := range []*regexp.Regexp{threadsPath, commentPath, prStatus, commitStat} {
		m := re.FindStringSubmatch(path)
		if m == nil {
			continue
		}
		if !s.isProject(m[1]) || (m[2] != "gitops" && m[2] != "c0ffee00-1111-4222-8333-444455556666") {
			fail(w, http.StatusNotFound, "TF401019: The Git repository with name or identifier "+m[2]+" does not exist or you do not have permissions for the operation you are attempting.", "GitRepositoryNotFoundException")
			return
		}
		if write && s.ReadOnly {
			fail(w, http.StatusForbidden, "TF401027: You need the Git 'PullRequestContribute' permission to perform this action. Details: identity '"+s.Actor.DisplayName+"', scope 'repository'.", "GitNeedsPermissionException")
			return
		}
		switch re {
		case threadsPath:
			s.threadsReq(w, r, atoi(m[3]), body)
		case commentPath:
			s.commentReq(w, r, atoi(m[3]), atoi(m[4]), atoi(m[5]), body)
		case prStatus, commitStat:
			if r.Method != http.MethodPost {
				fail(w, http.StatusMethodNotAllowed, "The requested resource does not support http method '"+r.Method+"'.", "HttpException")
				return
			}
			if s.NoStatusPermission {
				fail(w, http.StatusForbidden, "TF401027: You need the Git 'PullRequestContribute' permission to perform this action. Details: identity '"+s.Actor.DisplayName+"', scope 'repository'.", "GitNeedsPermissionException")
				return
			}
			var st struct {
				State       string `json:"state"`
				Description string `json:"description"`
				TargetURL   string `json:"targetUrl"`
				Context     struct{ Genre, Name string }
			}
			if json.Unmarshal(body, &st) != nil || st.Context.Name == "" {
				fail(w, http.StatusBadRequest, "Value cannot be null.\r\nParameter name: status.Context", "ArgumentNullException")
				return
			}
			rec := map[string]any{"state": st.State, "description": st.Description, "targetUrl": st.TargetURL, "genre": st.Context.Genre, "name": st.Context.Name, "pr": 0, "sha": ""}
			if re == prStatus {
				rec["pr"] = atoi(m[3])
			} else {
				rec["sha"] = m[3]
			}
			s.Statuses = append(s.Statuses, rec)
			s.nextID++
			writeJSON(w, http.StatusCreated, map[string]any{"id": s.nextID, "state": st.State, "description": st.Description, "context": st.Context,
				"targetUrl": st.TargetURL, "createdBy": s.Actor})
		}
		return
	}
	fail(w, http.StatusNotFound, "The controller for path '"+r.URL.Path+"' was not found or does not implement IController.", "HttpException")
}

func (s *Server) authorized(h string) bool {
	if h == "Bearer "+s.Token {
		return true
	}
	enc, ok := strings.CutPrefix(h, "Basic ")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return false
	}
	_, pass, _ := strings.Cut(string(raw), ":")
	return pass == s.Token
}

func (s *Server) isProject(p string) bool {
	return p == "shop" || p == "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
}

func (s *Server) threadsReq(w http.ResponseWriter, r *http.Request, pr int, body []byte) {
	switch r.Method {
	case http.MethodGet:
		collection(w, s.threads[pr])
	case http.MethodPost:
		var t struct {
			Comments []struct {
				Content     string `json:"content"`
				CommentType string `json:"commentType"`
			} `json:"comments"`
			Status string `json:"status"`
		}
		if json.Unmarshal(body, &t) != nil || len(t.Comments) == 0 {
			fail(w, http.StatusBadRequest, "The thread must contain at least one comment.", "InvalidArgumentValueException")
			return
		}
		if tooLong(t.Comments[0].Content) {
			fail(w, http.StatusBadRequest, "A discussion comment cannot be longer than 150000 characters.\r\nParameter name: comment.Content", "ArgumentException")
			return
		}
		status := t.Status
		if status == "" {
			status = "active"
		}
		writeJSON(w, http.StatusOK, s.addThread(pr, s.Actor, t.Comments[0].Content, "text", status))
	default:
		fail(w, http.StatusMethodNotAllowed, "The requested resource does not support http method '"+r.Method+"'.", "HttpException")
	}
}

func (s *Server) commentReq(w http.ResponseWriter, r *http.Request, pr, thread, comment int, body []byte) {
	if r.Method != http.MethodPatch {
		fail(w, http.StatusMethodNotAllowed, "The requested resource does not support http method '"+r.Method+"'.", "HttpException")
		return
	}
	for _, t := range s.threads[pr] {
		if t.ID != thread {
			continue
		}
		for i := range t.Comments {
			c := &t.Comments[i]
			if c.ID != comment || c.IsDeleted {
				continue
			}
			if c.Author.ID != s.Actor.ID {
				fail(w, http.StatusForbidden, "TF401181: You can only edit your own comments.", "InvalidAccessException")
				return
			}
			var in struct {
				Content string `json:"content"`
			}
			_ = json.Unmarshal(body, &in)
			if tooLong(in.Content) {
				fail(w, http.StatusBadRequest, "A discussion comment cannot be longer than 150000 characters.\r\nParameter name: comment.Content", "ArgumentException")
				return
			}
			c.Content = in.Content
			writeJSON(w, http.StatusOK, c)
			return
		}
	}
	fail(w, http.StatusNotFound, fmt.Sprintf("TF401180: The requested pull request comment %d in thread %d cannot be found.", comment, thread), "CommentNotFoundException")
}

func tooLong(s string) bool { return len(utf16.Encode([]rune(s))) > MaxComment }

var (
	statesPath    = regexp.MustCompile(`^workItemTypes/([^/]+)/states$`)
	typesPath     = regexp.MustCompile(`^workItemTypes$`)
	createPath    = regexp.MustCompile(`^workItems/\$(.+)$`)
	itemPath      = regexp.MustCompile(`^workItems/(\d+)$`)
	itemComments  = regexp.MustCompile(`^workItems/(\d+)/comments$`)
	workItemLimit = 200
)

func (s *Server) boards(w http.ResponseWriter, r *http.Request, rest string, body []byte) {
	if s.BoardsOff {
		fail(w, http.StatusNotFound, "VS403403: Azure Boards is disabled for the project shop.", "ServiceDisabledException")
		return
	}
	if s.NoBoardsPermission || (s.ReadOnly && r.Method != http.MethodGet && !strings.EqualFold(rest, "wiql") && !strings.EqualFold(rest, "workitemsbatch")) {
		fail(w, http.StatusForbidden, "TF237111: The current user does not have permissions to save work items under the specified area path.", "WorkItemTrackingPermissionException")
		return
	}
	switch {
	case strings.EqualFold(rest, "wiql") && r.Method == http.MethodPost:
		var q struct{ Query string }
		_ = json.Unmarshal(body, &q)
		m := tagClause.FindStringSubmatch(q.Query)
		if m == nil || !strings.Contains(q.Query, "[System.TeamProject] = @project") {
			fail(w, http.StatusBadRequest, "TF51005: The query references a field that does not exist.", "WorkItemTrackingQueryException")
			return
		}
		tag := strings.ReplaceAll(m[1], "''", "'")
		refs := []map[string]any{}
		for _, id := range s.sortedIDs() {
			if hasTag(s.WorkItems[id].Fields["System.Tags"], tag) {
				refs = append(refs, map[string]any{"id": id, "url": fmt.Sprintf("%s/acme/_apis/wit/workItems/%d", s.URL, id)})
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"queryType": "flat", "queryResultType": "workItem", "asOf": "2026-01-01T00:00:00Z",
			"columns": []map[string]any{{"referenceName": "System.Id", "name": "ID"}}, "workItems": refs})
	case strings.EqualFold(rest, "workitemsbatch") && r.Method == http.MethodPost:
		var req struct {
			IDs    []int    `json:"ids"`
			Fields []string `json:"fields"`
		}
		_ = json.Unmarshal(body, &req)
		if len(req.IDs) > workItemLimit {
			fail(w, http.StatusBadRequest, fmt.Sprintf("VS402337: The number of work items requested exceeds the limit of %d.", workItemLimit), "WorkItemTrackingQueryResultSizeLimitExceededException")
			return
		}
		var out []map[string]any
		for _, id := range req.IDs {
			if wi := s.WorkItems[id]; wi != nil {
				out = append(out, s.show(wi, req.Fields))
			}
		}
		collection(w, out)
	case typesPath.MatchString(rest) && r.Method == http.MethodGet:
		var out []map[string]any
		for _, name := range sortedKeys(s.Types) {
			out = append(out, map[string]any{"name": name, "referenceName": "Microsoft.VSTS.WorkItemTypes." + strings.ReplaceAll(name, " ", ""), "isDisabled": false})
		}
		collection(w, out)
	case statesPath.MatchString(rest) && r.Method == http.MethodGet:
		st, ok := s.Types[statesPath.FindStringSubmatch(rest)[1]]
		if !ok {
			fail(w, http.StatusNotFound, "TF201063: Work item type "+statesPath.FindStringSubmatch(rest)[1]+" does not exist.", "WorkItemTypeNotFoundException")
			return
		}
		collection(w, st)
	case createPath.MatchString(rest) && r.Method == http.MethodPost:
		typ := createPath.FindStringSubmatch(rest)[1]
		states, ok := s.Types[typ]
		if !ok {
			fail(w, http.StatusNotFound, "TF201063: Work item type "+typ+" does not exist.", "WorkItemTypeNotFoundException")
			return
		}
		s.nextID++
		wi := &WorkItem{ID: s.nextID, Fields: map[string]any{"System.Id": s.nextID, "System.WorkItemType": typ, "System.State": states[0].Name,
			"System.CreatedBy": s.Actor, "System.TeamProject": "shop"}, Formats: map[string]string{}}
		if !s.patch(w, r, wi, body) {
			s.nextID--
			return
		}
		s.WorkItems[wi.ID] = wi
		writeJSON(w, http.StatusOK, s.show(wi, nil))
	case itemPath.MatchString(rest) && (r.Method == http.MethodPatch || r.Method == http.MethodGet):
		wi := s.WorkItems[atoi(itemPath.FindStringSubmatch(rest)[1])]
		if wi == nil {
			fail(w, http.StatusNotFound, "TF401232: Work item "+itemPath.FindStringSubmatch(rest)[1]+" does not exist, or you do not have permissions to read it.", "WorkItemUnauthorizedAccessException")
			return
		}
		if r.Method == http.MethodGet {
			var fields []string
			if f := r.URL.Query().Get("fields"); f != "" {
				fields = strings.Split(f, ",")
			}
			writeJSON(w, http.StatusOK, s.show(wi, fields))
			return
		}
		cp := *wi
		cp.Fields, cp.Formats = clone(wi.Fields), map[string]string{}
		for k, v := range wi.Formats {
			cp.Formats[k] = v
		}
		if !s.patch(w, r, &cp, body) {
			return
		}
		*wi = cp
		writeJSON(w, http.StatusOK, s.show(wi, nil))
	case itemComments.MatchString(rest) && r.Method == http.MethodPost:
		wi := s.WorkItems[atoi(itemComments.FindStringSubmatch(rest)[1])]
		if wi == nil {
			fail(w, http.StatusNotFound, "TF401232: Work item does not exist, or you do not have permissions to read it.", "WorkItemUnauthorizedAccessException")
			return
		}
		var c struct{ Text string }
		_ = json.Unmarshal(body, &c)
		format := r.URL.Query().Get("format")
		wi.Comments = append(wi.Comments, WorkItemComment{Text: c.Text, Format: format, By: s.Actor})
		writeJSON(w, http.StatusOK, map[string]any{"workItemId": wi.ID, "id": len(wi.Comments), "text": c.Text, "format": format, "createdBy": s.Actor})
	default:
		fail(w, http.StatusNotFound, "The controller for path '"+r.URL.Path+"' was not found or does not implement IController.", "HttpException")
	}
}

// patch applies a JSON patch document to wi as Azure Boards does: add or replace of
// /fields/X and /multilineFieldsFormat/X, a state its type has, the body a JSON
// array sent as application/json-patch+json.
func (s *Server) patch(w http.ResponseWriter, r *http.Request, wi *WorkItem, body []byte) bool {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json-patch+json") {
		fail(w, http.StatusUnsupportedMediaType, "The request indicated a Content-Type of \""+r.Header.Get("Content-Type")+"\" for method type \""+r.Method+"\" which is not supported. Valid content types for this method are: application/json-patch+json.", "VssRequestContentTypeNotSupportedException")
		return false
	}
	var ops []struct {
		Op, Path string
		Value    any
	}
	if err := json.Unmarshal(body, &ops); err != nil || len(ops) == 0 {
		fail(w, http.StatusBadRequest, "You must pass a valid patch document in the body of the request.", "VssPropertyValidationException")
		return false
	}
	for _, op := range ops {
		if op.Op != "add" && op.Op != "replace" {
			fail(w, http.StatusBadRequest, "The operation "+op.Op+" is not supported.", "VssPropertyValidationException")
			return false
		}
		switch {
		case strings.HasPrefix(op.Path, "/fields/"):
			field := strings.TrimPrefix(op.Path, "/fields/")
			wi.Fields[field] = op.Value
			if field == "System.Description" && wi.Formats[field] == "" {
				wi.Formats[field] = "html"
			}
		case strings.HasPrefix(op.Path, "/multilineFieldsFormat/"):
			v, _ := op.Value.(string)
			if !strings.EqualFold(v, "Markdown") && !strings.EqualFold(v, "Html") {
				fail(w, http.StatusBadRequest, "Invalid multiline field format "+v+".", "VssPropertyValidationException")
				return false
			}
			wi.Formats[strings.TrimPrefix(op.Path, "/multilineFieldsFormat/")] = strings.ToLower(v)
		default:
			fail(w, http.StatusBadRequest, "The path "+op.Path+" is not valid.", "VssPropertyValidationException")
			return false
		}
	}
	if title, _ := wi.Fields["System.Title"].(string); title == "" || len(utf16.Encode([]rune(title))) > 255 {
		fail(w, http.StatusBadRequest, "TF401320: Rule Error for field Title. Error code: Required, InvalidEmpty, MaxLength.", "RuleValidationException")
		return false
	}
	state, _ := wi.Fields["System.State"].(string)
	found := false
	for _, st := range s.Types[wi.Fields["System.WorkItemType"].(string)] {
		found = found || st.Name == state
	}
	if !found {
		fail(w, http.StatusBadRequest, "TF401320: Rule Error for field State. Error code: LimitedToValues, AllowsOldValue, InvalidEmpty.", "RuleValidationException")
		return false
	}
	wi.Rev++
	return true
}

func (s *Server) show(wi *WorkItem, fields []string) map[string]any {
	f := wi.Fields
	if len(fields) > 0 {
		f = map[string]any{}
		for _, name := range fields {
			if v, ok := wi.Fields[name]; ok {
				f[name] = v
			}
		}
	}
	return map[string]any{"id": wi.ID, "rev": wi.Rev, "fields": f, "multilineFieldsFormat": wi.Formats,
		"url": fmt.Sprintf("%s/acme/_apis/wit/workItems/%d", s.URL, wi.ID)}
}

func (s *Server) sortedIDs() []int {
	var ids []int
	for id := range s.WorkItems {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// hasTag says whether tags ("a; b") has tag, as WIQL's CONTAINS on System.Tags
// matches a whole tag, case-insensitively.
func hasTag(tags any, tag string) bool {
	s, _ := tags.(string)
	for _, t := range strings.Split(s, ";") {
		if strings.EqualFold(strings.TrimSpace(t), tag) {
			return true
		}
	}
	return false
}

func clone(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// collection answers as Azure DevOps answers a list: {"count": n, "value": [...]}.
func collection[T any](w http.ResponseWriter, items []T) {
	if items == nil {
		items = []T{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(items), "value": items})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8; api-version=7.1")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers with Azure DevOps' error shape.
func fail(w http.ResponseWriter, code int, msg, typeKey string) {
	writeJSON(w, code, map[string]any{"$id": "1", "innerException": nil, "message": msg, "typeName": "Microsoft.TeamFoundation." + typeKey + ", Microsoft.TeamFoundation.Server",
		"typeKey": typeKey, "errorCode": 0, "eventId": 3000})
}
