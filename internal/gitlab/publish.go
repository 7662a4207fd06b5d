package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// MaxNoteBytes keeps a note under GitLab's 1,000,000-character limit on a note's
// body, with room for the marker (bytes are never fewer than characters).
const MaxNoteBytes = 999000

// DriftLabel labels drift issues.
const DriftLabel = "drift"

// Publisher talks to GitLab's REST API v4 for one project (and merge request).
type Publisher struct {
	client *gl.Client
	ctx    Context
	self   string
	// Warn, when set, hears what the caller should know but need not fail on.
	Warn func(msg string)
}

// NewPublisher builds a client for the context's API URL (a self-managed GitLab
// included). The token goes to the API URL's scheme, host and port only; redirects
// elsewhere are refused; rate limits are waited out as the answers say, a bounded
// number of times.
func NewPublisher(c Context, base http.RoundTripper) (*Publisher, error) {
	return newPublisher(c, base, forge.Sleep)
}

func newPublisher(c Context, base http.RoundTripper, wait func(context.Context, time.Duration) error) (*Publisher, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	api := strings.TrimSuffix(c.APIURL, "/") + "/"
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("the GitLab API URL %q is not an http(s) URL such as https://gitlab.com/api/v4 (CI_API_V4_URL, --gitlab-api-url)", c.APIURL)
	}
	hc := &http.Client{
		Transport: &forge.Transport{Next: base, Origin: forge.Origin(u), Credentials: credentials, Authorize: privateToken(c.Token),
			Answered: withoutRateLimitLimit, Retry: retryAfter, Sleep: wait},
		CheckRedirect: forge.RefuseOtherOrigins(forge.Origin(u), "GitLab", "--gitlab-api-url (CI_API_V4_URL)"),
		Timeout:       60 * time.Second,
	}
	// The transport authenticates, so the client sends no credential of its own, and
	// it retries, so client-go does not (its waits are on the wall clock).
	client, err := gl.NewAuthSourceClient(gl.Unauthenticated{}, gl.WithBaseURL(api), gl.WithHTTPClient(hc), gl.WithoutRetries())
	if err != nil {
		return nil, fmt.Errorf("the GitLab API URL %q: %w", c.APIURL, err)
	}
	return &Publisher{client: client, ctx: c}, nil
}

// Self is the token's user (GET /user): a project access token's bot user, or a
// person's. GitLab usernames are what notes show as their author.
func (p *Publisher) Self(ctx context.Context) (string, error) {
	if p.self != "" {
		return p.self, nil
	}
	u, _, err := p.client.Users.CurrentUser(gl.WithContext(ctx))
	if err != nil {
		return "", p.explain("learn whom the token belongs to (GET /user)", err)
	}
	if u.Username == "" {
		return "", errors.New("GitLab's answer to GET /user has no username")
	}
	p.self = u.Username
	return p.self, nil
}

// Notes lists the merge request's notes, oldest first, 100 a page, leaving out
// GitLab's system notes ("added 1 commit").
func (p *Publisher) Notes(ctx context.Context, each func(forge.Note) bool) error {
	opts := &gl.ListMergeRequestNotesOptions{ListOptions: gl.ListOptions{PerPage: 100, Page: 1}, OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("asc")}
	for {
		notes, resp, err := p.client.Notes.ListMergeRequestNotes(p.ctx.Project, p.ctx.MR, opts, gl.WithContext(ctx))
		if err != nil {
			return p.explain("list the merge request's notes", err)
		}
		for _, n := range notes {
			if n.System {
				continue
			}
			if !each(forge.Note{ID: n.ID, Body: n.Body, Author: n.Author.Username}) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// CreateNote writes a note on the merge request.
func (p *Publisher) CreateNote(ctx context.Context, body string) (forge.Note, error) {
	n, _, err := p.client.Notes.CreateMergeRequestNote(p.ctx.Project, p.ctx.MR, &gl.CreateMergeRequestNoteOptions{Body: &body}, gl.WithContext(ctx))
	if err != nil {
		return forge.Note{}, p.explain("write the merge request note", err)
	}
	return forge.Note{ID: n.ID, Body: n.Body, Author: n.Author.Username}, nil
}

// UpdateNote edits a merge request note.
func (p *Publisher) UpdateNote(ctx context.Context, id int64, body string) error {
	if _, _, err := p.client.Notes.UpdateMergeRequestNote(p.ctx.Project, p.ctx.MR, id, &gl.UpdateMergeRequestNoteOptions{Body: &body}, gl.WithContext(ctx)); err != nil {
		return p.explain("update the drift note", err)
	}
	return nil
}

// MaxStatusField is what GitLab keeps of a commit status's description and link
// (CommitStatus validates both at 255 characters and refuses a status over it).
const MaxStatusField = 255

// Status sets the commit status named name on the head commit, in the running
// pipeline when known: success or failed, the counts as its description (cut to
// MaxStatusField characters), and as its link the first of links that GitLab keeps
// (none when none fits).
func (p *Publisher) Status(ctx context.Context, name string, failed bool, description string, links ...string) error {
	if p.ctx.HeadSHA == "" {
		return errors.New("cannot set a commit status: the head commit is unknown (CI_COMMIT_SHA or --gitlab-sha)")
	}
	if name == "" {
		name = "drift"
	}
	state := gl.Success
	if failed {
		state = gl.Failed
	}
	if r := []rune(description); len(r) > MaxStatusField {
		description = string(r[:MaxStatusField-3]) + "..."
	}
	opts := &gl.SetCommitStatusOptions{State: state, Name: &name, Description: &description}
	for _, link := range links {
		if link != "" && utf8.RuneCountInString(link) <= MaxStatusField {
			opts.TargetURL = &link
			break
		}
	}
	if p.ctx.PipelineID > 0 {
		opts.PipelineID = &p.ctx.PipelineID
	}
	_, _, err := p.client.Commits.SetCommitStatus(p.ctx.Project, p.ctx.HeadSHA, opts, gl.WithContext(ctx))
	switch code := StatusCode(err); {
	case err == nil:
		return nil
	case code == http.StatusBadRequest && strings.Contains(err.Error(), "has already been taken"):
		// GenericCommitStatus refuses a name that a job of the pipeline has.
		pipeline := "the commit's pipeline"
		if p.ctx.PipelineID > 0 {
			pipeline = "pipeline " + strconv.FormatInt(p.ctx.PipelineID, 10)
		}
		return p.scrubbed(code, fmt.Sprintf("GitLab refused the commit status %q (400, the name has already been taken): a job of %s has that name, "+
			"and GitLab keeps one name per pipeline for its jobs and the statuses added to it; rename that job, or set no status (--gitlab-status=false): %v",
			name, pipeline, err))
	case code == http.StatusNotFound && p.ctx.PipelineID > 0:
		// GitLab answers 404 to a pipeline_id whose pipeline does not run the commit.
		return p.scrubbed(code, fmt.Sprintf("GitLab could not set the commit status on %s in pipeline %d (404): GitLab adds a status to a pipeline only "+
			"for the commit that pipeline runs (CI_COMMIT_SHA; --gitlab-sha with another commit leaves the pipeline out), and the project "+
			"(CI_PROJECT_ID) must be the pipeline's: %v", p.ctx.HeadSHA, p.ctx.PipelineID, err))
	}
	return p.explain("set the commit status", err)
}

// Issues lists the project's issues with the label, open and closed.
func (p *Publisher) Issues(ctx context.Context, label string, each func(forge.Issue) bool) error {
	opts := &gl.ListProjectIssuesOptions{ListOptions: gl.ListOptions{PerPage: 100, Page: 1}, Labels: &gl.LabelOptions{label}}
	for {
		issues, resp, err := p.client.Issues.ListProjectIssues(p.ctx.Project, opts, gl.WithContext(ctx))
		if err != nil {
			return p.explain("list the drift issues", err)
		}
		for _, is := range issues {
			author := ""
			if is.Author != nil {
				author = is.Author.Username
			}
			if !each(forge.Issue{ID: is.IID, Body: is.Description, Open: is.State != "closed", Author: author}) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// EnsureLabel creates the project label when neither the project nor its groups
// have it (GitLab answers 409 to a label that exists).
func (p *Publisher) EnsureLabel(ctx context.Context, label string) error {
	_, _, err := p.client.Labels.GetLabel(p.ctx.Project, label, gl.WithContext(ctx))
	if err == nil {
		return nil
	}
	if StatusCode(err) != http.StatusNotFound {
		return p.explain("read the drift label", err)
	}
	_, _, err = p.client.Labels.CreateLabel(p.ctx.Project, &gl.CreateLabelOptions{Name: &label, Color: gl.Ptr("#d93f0b"),
		Description: gl.Ptr("The cluster no longer matches the repository (drift detect)")}, gl.WithContext(ctx))
	if err != nil && StatusCode(err) != http.StatusConflict {
		return p.explain("create the drift label", err)
	}
	return nil
}

// CreateIssue opens an issue with the label.
func (p *Publisher) CreateIssue(ctx context.Context, title, body, label string) (forge.Issue, error) {
	is, _, err := p.client.Issues.CreateIssue(p.ctx.Project, &gl.CreateIssueOptions{Title: &title, Description: &body, Labels: &gl.LabelOptions{label}}, gl.WithContext(ctx))
	if err != nil {
		return forge.Issue{}, p.explain("open the drift issue", err)
	}
	return forge.Issue{ID: is.IID, Body: is.Description, Open: true}, nil
}

// EditIssue changes an issue's title, description or state.
func (p *Publisher) EditIssue(ctx context.Context, id int64, e forge.IssueEdit) error {
	opts := &gl.UpdateIssueOptions{Title: e.Title, Description: e.Body}
	what := "update the drift issue"
	if e.Open != nil {
		event, verb := "close", "close the drift issue"
		if *e.Open {
			event, verb = "reopen", "reopen the drift issue"
		}
		opts.StateEvent, what = &event, verb
	}
	if _, _, err := p.client.Issues.UpdateIssue(p.ctx.Project, id, opts, gl.WithContext(ctx)); err != nil {
		return p.explain(what, err)
	}
	return nil
}

// CommentOnIssue writes a note on an issue.
func (p *Publisher) CommentOnIssue(ctx context.Context, id int64, body string) error {
	if _, _, err := p.client.Notes.CreateIssueNote(p.ctx.Project, id, &gl.CreateIssueNoteOptions{Body: &body}, gl.WithContext(ctx)); err != nil {
		return p.explain("write a note on the drift issue", err)
	}
	return nil
}

// IssueRef is "#IID".
func (p *Publisher) IssueRef(id int64) string { return "#" + strconv.FormatInt(id, 10) }

// TooLong says whether GitLab refused a note for its size: 413 from the request size
// limit, or a 400 or 422 saying the note is too long.
func TooLong(err error) bool {
	switch StatusCode(err) {
	case http.StatusRequestEntityTooLarge:
		return true
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return strings.Contains(err.Error(), "too long")
	}
	return false
}

// StatusCode returns the HTTP status of a GitLab error (0 when there is none).
func StatusCode(err error) int {
	var de *Error
	if errors.As(err, &de) {
		return de.Code
	}
	var er *gl.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	if errors.Is(err, gl.ErrNotFound) {
		return http.StatusNotFound
	}
	return 0
}

// Error is a GitLab failure explained; its text never holds the token.
type Error struct {
	Code int
	msg  string
}

func (e *Error) Error() string { return e.msg }

// explain turns a GitLab error into what to do, with the token scrubbed from whatever
// the server echoed.
func (p *Publisher) explain(what string, err error) error {
	code := StatusCode(err)
	var msg string
	switch {
	case code == http.StatusUnauthorized:
		msg = fmt.Sprintf("GitLab refused the token to %s (401): it is wrong, expired or revoked; give a project access token with the api scope (DRIFT_GITLAB_TOKEN, --gitlab-token): %v", what, err)
	case code == http.StatusForbidden:
		msg = fmt.Sprintf("GitLab refused to %s (403): the token's user lacks the role (a project access token needs the api scope and the Developer role); a merge request from a fork runs in the fork without the project's variables, so preview forks from a pipeline in this project (docs/gitlab.md, \"Merge requests from forks\"); the report is still in the job's artifacts: %v", what, err)
	case code == http.StatusNotFound:
		msg = fmt.Sprintf("GitLab could not %s (404): check the project (CI_PROJECT_ID) and the merge request IID, and that the token's user is a member of the project: %v", what, err)
	case code == http.StatusConflict:
		msg = fmt.Sprintf("GitLab could not %s (409, a conflict): %v", what, err)
	case code == http.StatusRequestEntityTooLarge:
		msg = fmt.Sprintf("GitLab refused to %s (413): the request is larger than the instance allows: %v", what, err)
	case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
		msg = fmt.Sprintf("GitLab rejected the request to %s (%d): %v", what, code, err)
	case code == http.StatusTooManyRequests:
		msg = fmt.Sprintf("GitLab's rate limit (429) stopped drift after %d tries to %s; run again later: %v", forge.MaxTries, what, err)
	case code >= 500:
		msg = fmt.Sprintf("GitLab failed to %s (%d, a server error; GET and PUT were tried %d times): %v", what, code, forge.MaxTries, err)
	default:
		msg = fmt.Sprintf("failed to %s on GitLab: %v", what, err)
	}
	return p.scrubbed(code, msg)
}

// scrubbed is an Error of the message with the token scrubbed from whatever the
// server echoed.
func (p *Publisher) scrubbed(code int, msg string) error {
	if p.ctx.Token != "" {
		msg = strings.ReplaceAll(msg, p.ctx.Token, "***")
	}
	return &Error{Code: code, msg: msg}
}
