package bitbucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// dataCenter is Bitbucket Data Center's REST API 1.0 for one repository (and pull
// request).
type dataCenter struct {
	*client
	self string
	// versions are the comments' versions as Notes read them: Data Center edits a
	// comment only at its current version (optimistic locking).
	versions map[int64]int
}

type dcUser struct {
	Name        string `json:"name"`
	Slug        string `json:"slug,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	ID          int64  `json:"id,omitempty"`
}

type dcComment struct {
	ID      int64   `json:"id"`
	Version int     `json:"version"`
	Text    string  `json:"text"`
	Author  *dcUser `json:"author"`
	// Anchor is set on a comment on a file's lines.
	Anchor any `json:"anchor,omitempty"`
}

type dcActivity struct {
	ID            int64      `json:"id"`
	Action        string     `json:"action"`
	CommentAction string     `json:"commentAction,omitempty"`
	Comment       *dcComment `json:"comment,omitempty"`
	CommentAnchor any        `json:"commentAnchor,omitempty"`
}

// dcPage is a page of a Data Center collection (start and limit; nextPageStart until
// isLastPage).
type dcPage[T any] struct {
	Values        []T  `json:"values"`
	IsLastPage    bool `json:"isLastPage"`
	NextPageStart int  `json:"nextPageStart"`
}

// maxActivities bounds the pull request's activities read (a page of 100 each time).
const maxActivities = 20000

func (d *dataCenter) repo(segments ...string) string {
	return d.path(append([]string{"api", "latest", "projects", d.owner, "repos", d.slug}, segments...)...)
}

func (d *dataCenter) pr(segments ...string) string {
	return d.repo(append([]string{"pull-requests", strconv.FormatInt(d.ci.PR, 10)}, segments...)...)
}

func dcAuthor(u *dcUser) string {
	if u == nil {
		return ""
	}
	return u.Name
}

// Self is drift's username: DRIFT_BITBUCKET_AUTHOR when set, else the X-AUSERNAME
// header Data Center sets on every authenticated answer (an HTTP access token's
// answers name its bot user), read from GET of the repository, else GET
// /plugins/servlet/applinks/whoami, which answers the username as text. Data Center
// has no REST resource of the current user.
func (d *dataCenter) Self(ctx context.Context) (string, error) {
	if d.self != "" {
		return d.self, nil
	}
	if d.ci.Author != "" {
		d.self = d.ci.Author
		return d.self, nil
	}
	if name := d.known(); name != "" {
		d.self = name
		return name, nil
	}
	if _, err := d.do(ctx, http.MethodGet, d.repo(), nil, nil); err != nil {
		return "", d.explain("learn whom the token belongs to (GET of the repository)", err)
	}
	if name := d.known(); name != "" {
		d.self = name
		return name, nil
	}
	name, err := d.whoami(ctx)
	if err != nil || name == "" {
		return "", d.scrubbed(StatusCode(err), fmt.Sprintf("Bitbucket Data Center did not say whom the token belongs to (no X-AUSERNAME header, and /plugins/servlet/applinks/whoami answered no name: %v); "+
			"set %s to the token's username (%s)", err, AuthorVariable, Kind.Docs))
	}
	d.self = name
	return name, nil
}

func (d *dataCenter) known() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.username
}

// whoami reads /plugins/servlet/applinks/whoami (beside /rest).
func (d *dataCenter) whoami(ctx context.Context) (string, error) {
	u := strings.TrimSuffix(strings.TrimSuffix(d.api.String(), "/"), "/rest") + "/plugins/servlet/applinks/whoami"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", &apiError{Code: resp.StatusCode}
	}
	return strings.TrimSpace(string(data)), nil
}

// Notes lists the pull request's comments, oldest first. Data Center lists them only
// among the pull request's activities (COMMENTED), newest first, so every page is
// read (start and limit, at most maxActivities), then the comments are given
// oldest first, each once (an edit adds an activity of the same comment), leaving out
// comments on a file's lines.
func (d *dataCenter) Notes(ctx context.Context, each func(forge.Note) bool) error {
	var comments []*dcComment
	seen := map[int64]bool{}
	d.versions = map[int64]int{}
	for start, read := 0, 0; ; {
		var page dcPage[dcActivity]
		if _, err := d.do(ctx, http.MethodGet, d.pr("activities")+"?limit=100&start="+strconv.Itoa(start), nil, &page); err != nil {
			return d.explain("list the pull request's comments (its activities)", err)
		}
		for _, a := range page.Values {
			if a.Action != "COMMENTED" || a.Comment == nil || a.CommentAnchor != nil || a.Comment.Anchor != nil || seen[a.Comment.ID] {
				continue
			}
			seen[a.Comment.ID] = true
			comments = append(comments, a.Comment)
		}
		read += len(page.Values)
		if page.IsLastPage || len(page.Values) == 0 {
			break
		}
		if read >= maxActivities {
			return d.scrubbed(0, fmt.Sprintf("the pull request has more than %d activities; drift reads no more to find its comment", maxActivities))
		}
		start = page.NextPageStart
	}
	for i := len(comments) - 1; i >= 0; i-- {
		cm := comments[i]
		d.versions[cm.ID] = cm.Version
		if !each(forge.Note{ID: cm.ID, Body: show(cm.Text), Author: dcAuthor(cm.Author)}) {
			return nil
		}
	}
	return nil
}

// CreateNote writes a comment on the pull request.
func (d *dataCenter) CreateNote(ctx context.Context, body string) (forge.Note, error) {
	var cm dcComment
	if _, err := d.do(ctx, http.MethodPost, d.pr("comments"), map[string]any{"text": hide(body)}, &cm); err != nil {
		return forge.Note{}, d.explain("write the pull request comment", err)
	}
	return forge.Note{ID: cm.ID, Body: show(cm.Text), Author: dcAuthor(cm.Author)}, nil
}

// UpdateNote edits a pull request comment at the version Notes read; a 409 (someone
// edited it since) reads the comment's current version and tries once more.
func (d *dataCenter) UpdateNote(ctx context.Context, id int64, body string) error {
	ref := strconv.FormatInt(id, 10)
	version, known := d.versions[id]
	for try := 0; ; try++ {
		if !known || try > 0 {
			var cm dcComment
			if _, err := d.do(ctx, http.MethodGet, d.pr("comments", ref), nil, &cm); err != nil {
				return d.explain("read the drift comment's version", err)
			}
			version = cm.Version
		}
		_, err := d.do(ctx, http.MethodPut, d.pr("comments", ref), map[string]any{"text": hide(body), "version": version}, nil)
		if err == nil {
			return nil
		}
		if StatusCode(err) != http.StatusConflict || try > 0 {
			return d.explain("update the drift comment", err)
		}
	}
}

// SetStatus sets the build status keyed by the status's name on the head commit in
// the repository (POST /rest/api/latest/projects/{key}/repos/{slug}/commits/{sha}/builds,
// Data Center 7.4 and later; a key's later status replaces the earlier). The URL is
// required: the status's link, else the commit's page. Data Center keeps 255
// characters of a key, name and description and 450 of a URL.
func (d *dataCenter) SetStatus(ctx context.Context, s forge.Status) error {
	if d.ci.HeadSHA == "" {
		return errors.New("cannot set a build status: the head commit is unknown (--bitbucket-sha)")
	}
	name := s.Name
	if name == "" {
		name = "drift"
	}
	state := "SUCCESSFUL"
	if s.Failed {
		state = "FAILED"
	}
	web := strings.TrimSuffix(strings.TrimSuffix(d.api.String(), "/"), "/rest") + "/projects/" + d.owner + "/repos/" + d.slug
	link := web + "/commits/" + d.ci.HeadSHA
	for _, l := range []string{s.Link, d.ci.RunURL} {
		if l != "" && len([]rune(l)) <= 450 {
			link = l
			break
		}
	}
	in := map[string]string{"key": statusKey(name), "state": state, "name": cut(name, MaxStatusField), "url": link, "description": cut(s.Description, MaxStatusField)}
	if _, err := d.do(ctx, http.MethodPost, d.repo("commits", d.ci.HeadSHA, "builds"), in, nil); err != nil {
		return d.explain("set the build status on "+d.ci.HeadSHA, err)
	}
	return nil
}

// errNoTracker is Data Center's answer to every issue call: it has no issue tracker.
func (d *dataCenter) errNoTracker() error {
	return errors.New("Bitbucket Data Center has no issue tracker, so drift detect cannot keep a drift issue there: run it without --bitbucket-issue; " +
		"its exit status (1 when the cluster drifted) and its reports (--json-report, --html, kept as the build's artifacts) say whether the cluster drifted (docs/bitbucket.md)")
}

// Issues refuses: Data Center has no issue tracker.
func (d *dataCenter) Issues(context.Context, string, func(forge.Issue) bool) error {
	return d.errNoTracker()
}

// EnsureLabel refuses: Data Center has no issue tracker.
func (d *dataCenter) EnsureLabel(context.Context, string) error { return d.errNoTracker() }

// CreateIssue refuses: Data Center has no issue tracker.
func (d *dataCenter) CreateIssue(context.Context, string, string, string) (forge.Issue, error) {
	return forge.Issue{}, d.errNoTracker()
}

// EditIssue refuses: Data Center has no issue tracker.
func (d *dataCenter) EditIssue(context.Context, int64, forge.IssueEdit) error {
	return d.errNoTracker()
}

// CommentOnIssue refuses: Data Center has no issue tracker.
func (d *dataCenter) CommentOnIssue(context.Context, int64, string) error { return d.errNoTracker() }

// IssueRef is "#N", as drift would write it; Data Center has no issues.
func (d *dataCenter) IssueRef(id int64) string { return "#" + strconv.FormatInt(id, 10) }
