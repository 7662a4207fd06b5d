package bitbucket

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// cloud is Bitbucket Cloud's REST API 2.0 for one repository (and pull request).
type cloud struct {
	*client
	self string
	// marked are the authors of the comments that carry a drift marker, as Notes saw
	// them ("{uuid} (display name)"), which an unanswerable Self names.
	marked []string
}

type cloudUser struct {
	UUID        string `json:"uuid"`
	DisplayName string `json:"display_name"`
	AccountID   string `json:"account_id,omitempty"`
	Type        string `json:"type,omitempty"`
}

type cloudContent struct {
	Raw string `json:"raw"`
}

type cloudComment struct {
	ID      int64        `json:"id"`
	Content cloudContent `json:"content"`
	User    *cloudUser   `json:"user"`
	Deleted bool         `json:"deleted"`
	Inline  any          `json:"inline,omitempty"`
	Parent  *struct {
		ID int64 `json:"id"`
	} `json:"parent,omitempty"`
}

type cloudIssue struct {
	ID       int64        `json:"id"`
	Title    string       `json:"title"`
	Content  cloudContent `json:"content"`
	State    string       `json:"state"`
	Reporter *cloudUser   `json:"reporter"`
}

// cloudPage is a page of a Cloud collection: the next page's URL in next ("" on the
// last).
type cloudPage[T any] struct {
	Values []T    `json:"values"`
	Next   string `json:"next"`
}

// repo is the repository's URL with more path below it.
func (c *cloud) repo(segments ...string) string {
	return c.path(append([]string{"repositories", c.owner, c.slug}, segments...)...)
}

func (c *cloud) pr(segments ...string) string {
	return c.repo(append([]string{"pullrequests", strconv.FormatInt(c.ci.PR, 10)}, segments...)...)
}

// uuid is a Cloud UUID as the API writes it, in braces.
func uuid(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.HasPrefix(s, "{") {
		s = "{" + s + "}"
	}
	return strings.ToLower(s)
}

func author(u *cloudUser) string {
	if u == nil {
		return ""
	}
	return uuid(u.UUID)
}

// Self is drift's user's UUID: DRIFT_BITBUCKET_AUTHOR when set, else GET /2.0/user,
// which answers for an API token or app password (with the read:user or account
// scope) but refuses every repository, project and workspace access token.
func (c *cloud) Self(ctx context.Context) (string, error) {
	if c.self != "" {
		return c.self, nil
	}
	if c.ci.Author != "" {
		c.self = uuid(c.ci.Author)
		return c.self, nil
	}
	var u cloudUser
	if _, err := c.do(ctx, http.MethodGet, c.path("user"), nil, &u); err != nil {
		if code := StatusCode(err); code == http.StatusUnauthorized || code == http.StatusForbidden {
			seen := "drift has written no comment here yet"
			if len(c.marked) > 0 {
				sort.Strings(c.marked)
				seen = "the comments that carry drift's marker here were written by " + strings.Join(c.marked, ", ")
			}
			return "", c.scrubbed(code, fmt.Sprintf("Bitbucket Cloud does not say whom the token belongs to (GET /2.0/user: %v): it refuses to tell an access token, "+
				"so set %s to the UUID of the token's user ({...}, the user of the comments it writes; %s), or use an API token with the read:user scope and %s (%s)",
				err, AuthorVariable, seen, UsernameVariable, Kind.Docs))
		}
		return "", c.explain("learn whom the token belongs to (GET /2.0/user)", err)
	}
	if u.UUID == "" {
		return "", errors.New("Bitbucket Cloud's answer to GET /2.0/user has no uuid")
	}
	c.self = uuid(u.UUID)
	return c.self, nil
}

// Notes lists the pull request's comments, oldest first (Cloud's order), 100 a page,
// following each answer's next URL on the API's origin only; deleted comments,
// comments on a file's lines and replies are left out (drift writes none of those).
func (c *cloud) Notes(ctx context.Context, each func(forge.Note) bool) error {
	fail := func(err error) error { return c.explain("list the pull request's comments", err) }
	return cloudPages(ctx, c, c.pr("comments")+"?pagelen=100", fail, func(cm cloudComment) bool {
		if cm.Deleted || cm.Inline != nil || cm.Parent != nil {
			return true
		}
		body := show(cm.Content.Raw)
		if strings.HasPrefix(body, "<!-- drift:") && cm.User != nil {
			c.marked = append(c.marked, author(cm.User)+" ("+strconv.Quote(cm.User.DisplayName)+")")
		}
		return each(forge.Note{ID: cm.ID, Body: body, Author: author(cm.User)})
	})
}

// cloudPages calls each with the values of the pages from first on, until each
// returns false or the last page.
func cloudPages[T any](ctx context.Context, c *cloud, first string, fail func(error) error, each func(T) bool) error {
	for next := first; next != ""; {
		var page cloudPage[T]
		if _, err := c.do(ctx, http.MethodGet, next, nil, &page); err != nil {
			return fail(err)
		}
		for _, v := range page.Values {
			if !each(v) {
				return nil
			}
		}
		next = page.Next
	}
	return nil
}

// CreateNote writes a comment on the pull request.
func (c *cloud) CreateNote(ctx context.Context, body string) (forge.Note, error) {
	var cm cloudComment
	if _, err := c.do(ctx, http.MethodPost, c.pr("comments"), map[string]any{"content": cloudContent{Raw: hide(body)}}, &cm); err != nil {
		return forge.Note{}, c.explain("write the pull request comment", err)
	}
	return forge.Note{ID: cm.ID, Body: show(cm.Content.Raw), Author: author(cm.User)}, nil
}

// UpdateNote edits a pull request comment (Cloud lets only its author).
func (c *cloud) UpdateNote(ctx context.Context, id int64, body string) error {
	if _, err := c.do(ctx, http.MethodPut, c.pr("comments", strconv.FormatInt(id, 10)), map[string]any{"content": cloudContent{Raw: hide(body)}}, nil); err != nil {
		return c.explain("update the drift comment", err)
	}
	return nil
}

// MaxStatusField is what drift sends of a build status's name and description, in
// characters (Data Center keeps 255; Cloud documents no limit).
const MaxStatusField = 255

// SetStatus sets the build status keyed by the status's name on the head commit
// (POST /commit/{sha}/statuses/build, which overwrites the key's earlier status).
// Cloud requires a URL: the status's link, else the pull request's or the commit's
// page.
func (c *cloud) SetStatus(ctx context.Context, s forge.Status) error {
	if c.ci.HeadSHA == "" {
		return errors.New("cannot set a build status: the head commit is unknown (BITBUCKET_COMMIT or --bitbucket-sha)")
	}
	name := s.Name
	if name == "" {
		name = "drift"
	}
	state := "SUCCESSFUL"
	if s.Failed {
		state = "FAILED"
	}
	link := s.Link
	if link == "" {
		link = c.ci.RunURL
	}
	if link == "" {
		web := c.web()
		if c.ci.PR > 0 {
			link = web + "/pull-requests/" + strconv.FormatInt(c.ci.PR, 10)
		} else {
			link = web + "/commits/" + url.PathEscape(c.ci.HeadSHA)
		}
	}
	in := map[string]string{"key": statusKey(name), "state": state, "name": cut(name, MaxStatusField), "url": link, "description": cut(s.Description, MaxStatusField)}
	if _, err := c.do(ctx, http.MethodPost, c.repo("commit", c.ci.HeadSHA, "statuses", "build"), in, nil); err != nil {
		return c.explain("set the build status on "+c.ci.HeadSHA, err)
	}
	return nil
}

// web is the repository's page: bitbucket.org's for api.bitbucket.org, else the
// API's host.
func (c *cloud) web() string {
	host := c.api.Host
	if h, ok := strings.CutPrefix(host, "api."); ok {
		host = h
	}
	return c.api.Scheme + "://" + host + "/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.slug)
}

// noTracker explains a 404 from the issues resource: the repository has no issue
// tracker (Bitbucket Cloud answers "Repository has no issue tracker.").
func (c *cloud) noTracker(what string, err error) error {
	if StatusCode(err) == http.StatusNotFound {
		return c.scrubbed(http.StatusNotFound, fmt.Sprintf("Bitbucket Cloud could not %s (404): the repository %s/%s has no issue tracker, or the token cannot see it; "+
			"turn the tracker on (Repository settings, Issue tracker) for drift detect to keep an issue, or run without --bitbucket-issue: the build status "+
			"and the report artifact still say whether the cluster drifted (%s): %v", what, c.owner, c.slug, Kind.Docs, err))
	}
	return c.explain(what, err)
}

// cloudOpen are the states of an open issue; resolved, closed, invalid, duplicate and
// wontfix are closed.
var cloudOpen = map[string]bool{"new": true, "open": true, "on hold": true, "submitted": true}

// Issues lists the repository's issues whose body carries a drift marker, newest
// first. Bitbucket Cloud's issues have no labels: the marker in the body is what
// makes an issue drift's (forge.DriftIssue requires it anyway), and label is not
// sent.
func (c *cloud) Issues(ctx context.Context, label string, each func(forge.Issue) bool) error {
	q := url.Values{"q": {`content.raw ~ "]: # (drift:report"`}, "sort": {"-id"}, "pagelen": {"50"}}
	fail := func(err error) error { return c.noTracker("list the drift issues", err) }
	return cloudPages(ctx, c, c.repo("issues")+"?"+q.Encode(), fail, func(is cloudIssue) bool {
		return each(forge.Issue{ID: is.ID, Body: show(is.Content.Raw), Open: cloudOpen[is.State], Author: author(is.Reporter)})
	})
}

// EnsureLabel does nothing: Bitbucket Cloud's issues have no labels.
func (c *cloud) EnsureLabel(context.Context, string) error { return nil }

// CreateIssue opens an issue (kind bug, Cloud's default); label has no place in it.
func (c *cloud) CreateIssue(ctx context.Context, title, body, label string) (forge.Issue, error) {
	var is cloudIssue
	if _, err := c.do(ctx, http.MethodPost, c.repo("issues"), map[string]any{"title": title, "content": cloudContent{Raw: hide(body)}}, &is); err != nil {
		return forge.Issue{}, c.noTracker("open the drift issue", err)
	}
	return forge.Issue{ID: is.ID, Body: show(is.Content.Raw), Open: true, Author: author(is.Reporter)}, nil
}

// EditIssue changes an issue's title and content (PUT), and its state through a
// change (POST /issues/{id}/changes: resolved to close, open to reopen), which is how
// Cloud records a state's change.
func (c *cloud) EditIssue(ctx context.Context, id int64, e forge.IssueEdit) error {
	ref := strconv.FormatInt(id, 10)
	if e.Open != nil {
		state, what := "resolved", "close the drift issue"
		if *e.Open {
			state, what = "open", "reopen the drift issue"
		}
		in := map[string]any{"changes": map[string]any{"state": map[string]string{"new": state}}}
		if _, err := c.do(ctx, http.MethodPost, c.repo("issues", ref, "changes"), in, nil); err != nil {
			return c.noTracker(what, err)
		}
	}
	in := map[string]any{}
	if e.Title != nil {
		in["title"] = *e.Title
	}
	if e.Body != nil {
		in["content"] = cloudContent{Raw: hide(*e.Body)}
	}
	if len(in) == 0 {
		return nil
	}
	if _, err := c.do(ctx, http.MethodPut, c.repo("issues", ref), in, nil); err != nil {
		return c.noTracker("update the drift issue", err)
	}
	return nil
}

// CommentOnIssue writes a comment on an issue.
func (c *cloud) CommentOnIssue(ctx context.Context, id int64, body string) error {
	if _, err := c.do(ctx, http.MethodPost, c.repo("issues", strconv.FormatInt(id, 10), "comments"), map[string]any{"content": cloudContent{Raw: hide(body)}}, nil); err != nil {
		return c.noTracker("comment on the drift issue", err)
	}
	return nil
}

// IssueRef is "#N", which Bitbucket Cloud links to the issue.
func (c *cloud) IssueRef(id int64) string { return "#" + strconv.FormatInt(id, 10) }
