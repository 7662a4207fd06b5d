package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// MaxCommentBytes keeps a comment under GitHub's 65,536-character limit with room to
// spare (bytes are never fewer than characters).
const MaxCommentBytes = 65000

// Publisher talks to GitHub's REST API.
type Publisher struct {
	client *gh.Client
	ctx    Context
	// author is the login drift writes as (Context.Author, else learnt on first need).
	author string
	// Warn, when set, hears what the caller should know but need not fail on.
	Warn func(msg string)
}

// NewPublisher builds a client for the context's API URL (GitHub Enterprise Server
// included). Requests are retried on rate limits as the response headers say, a
// bounded number of times, and sent one at a time. The token goes to the API URL's
// scheme, host and port only, and redirects to anywhere else are refused.
func NewPublisher(c Context, base http.RoundTripper) (*Publisher, error) {
	return newPublisher(c, base, forge.Sleep)
}

// newPublisher is NewPublisher with the rate-limit wait given: tests in this package
// pass one that records the waits instead of sleeping.
func newPublisher(c Context, base http.RoundTripper, wait func(context.Context, time.Duration) error) (*Publisher, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	api := strings.TrimSuffix(c.APIURL, "/") + "/"
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL such as https://api.github.com (--github-api-url)", c.APIURL)
	}
	hc := &http.Client{
		Transport: &forge.Transport{Next: base, Origin: forge.Origin(u), Credentials: []string{"Authorization"}, Authorize: bearer(c.Token),
			Retry: func(resp *http.Response, _ int) (time.Duration, bool) { return rateLimited(resp) }, Sleep: wait},
		CheckRedirect: forge.RefuseOtherOrigins(forge.Origin(u), "GitHub", "--github-api-url (GITHUB_API_URL)"),
		Timeout:       60 * time.Second,
	}
	client := gh.NewClient(hc)
	if client, err = client.WithEnterpriseURLs(api, api); err != nil {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not a URL: %w", c.APIURL, err)
	}
	// WithEnterpriseURLs appends api/v3/ to hosts other than api.github.com; the
	// Actions environment gives the full API URL already.
	client.BaseURL = u
	return &Publisher{client: client, ctx: c, author: c.Author}, nil
}

// Self is drift's login (Author), for forge.Forge.
func (p *Publisher) Self(ctx context.Context) (string, error) { return p.Author(ctx) }

// Notes lists the pull request's comments, oldest first, 100 a page.
func (p *Publisher) Notes(ctx context.Context, each func(forge.Note) bool) error {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := p.client.Issues.ListComments(ctx, p.ctx.Owner(), p.ctx.Repo(), p.ctx.PR, opts)
		if err != nil {
			return p.explain("list the pull request's comments", err)
		}
		for _, c := range comments {
			if !each(forge.Note{ID: c.GetID(), Body: c.GetBody(), Author: c.GetUser().GetLogin()}) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// CreateNote comments on the pull request.
func (p *Publisher) CreateNote(ctx context.Context, body string) (forge.Note, error) {
	created, _, err := p.client.Issues.CreateComment(ctx, p.ctx.Owner(), p.ctx.Repo(), p.ctx.PR, &gh.IssueComment{Body: &body})
	if err != nil {
		return forge.Note{}, p.explain("comment on the pull request", err)
	}
	p.checkCreatedBy("comment", created.GetUser())
	return forge.Note{ID: created.GetID(), Body: created.GetBody(), Author: created.GetUser().GetLogin()}, nil
}

// UpdateNote edits a comment.
func (p *Publisher) UpdateNote(ctx context.Context, id int64, body string) error {
	if _, _, err := p.client.Issues.EditComment(ctx, p.ctx.Owner(), p.ctx.Repo(), id, &gh.IssueComment{Body: &body}); err != nil {
		return p.explain("update the drift comment", err)
	}
	return nil
}

// Check reports the outcome on the head commit: a check run named drift with the
// title, the summary and the text (what the comment had no room for), or, when the
// token may not create check runs, a commit status.
func (p *Publisher) Check(ctx context.Context, name string, failed bool, title, summary, text string) (string, error) {
	if name == "" {
		name = "drift"
	}
	owner, repo := p.ctx.Owner(), p.ctx.Repo()
	if p.ctx.HeadSHA == "" {
		return "", errors.New("cannot report a check: the head commit is unknown (GITHUB_SHA or a pull_request event)")
	}
	conclusion := "success"
	if failed {
		conclusion = "failure"
	}
	if len(summary) > MaxCheckOutput {
		summary = "The full report is in the job summary."
	}
	if len(text) > MaxCheckOutput {
		text = ""
	}
	var textp *string
	if text != "" {
		textp = &text
	}
	_, _, err := p.client.Checks.CreateCheckRun(ctx, owner, repo, gh.CreateCheckRunOptions{
		Name: name, HeadSHA: p.ctx.HeadSHA, Status: gh.String("completed"), Conclusion: &conclusion,
		Output: &gh.CheckRunOutput{Title: &title, Summary: &summary, Text: textp},
	})
	if err == nil {
		return "check run", nil
	}
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || (er.Response.StatusCode != http.StatusForbidden && er.Response.StatusCode != http.StatusNotFound) {
		return "", p.explain("create the check run", err)
	}
	state := "success"
	if failed {
		state = "failure"
	}
	desc := title
	if len(desc) > 140 {
		desc = desc[:137] + "..."
	}
	if _, _, err := p.client.Repositories.CreateStatus(ctx, owner, repo, p.ctx.HeadSHA, &gh.RepoStatus{State: &state, Description: &desc, Context: gh.String(name)}); err != nil {
		return "", p.explain("set the commit status (the token may not create check runs either)", err)
	}
	return "commit status", nil
}

// StatusCode returns the HTTP status of a GitHub error (0 when there is none).
func StatusCode(err error) int {
	var de *Error
	if errors.As(err, &de) {
		return de.Code
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// Error is a GitHub failure explained; its text never holds the token.
type Error struct {
	Code int
	msg  string
}

func (e *Error) Error() string { return e.msg }

// explain turns a GitHub error into what to do, with the token scrubbed from whatever
// the server echoed.
func (p *Publisher) explain(what string, err error) error {
	code := StatusCode(err)
	var msg string
	switch code {
	case http.StatusForbidden:
		msg = fmt.Sprintf("GitHub refused to %s (403): the token lacks permission; a pull request from a fork gets a read-only token, so preview forks from a pull_request_target job that reads the pull request as git data (docs/github.md, \"Pull requests from forks\"); the report is still in the job summary: %v", what, err)
	case http.StatusNotFound:
		msg = fmt.Sprintf("GitHub could not %s (404): check the repository and the pull request number, and that the token can see the repository: %v", what, err)
	case http.StatusUnprocessableEntity:
		msg = fmt.Sprintf("GitHub rejected the request to %s (422): %v", what, err)
	default:
		msg = fmt.Sprintf("failed to %s on GitHub: %v", what, err)
	}
	if p.ctx.Token != "" {
		msg = strings.ReplaceAll(msg, p.ctx.Token, "***")
	}
	return &Error{Code: code, msg: msg}
}

// MaxCheckOutput is GitHub's limit on a check run's output summary and text, in
// characters (drift counts bytes, which is never fewer).
const MaxCheckOutput = 65535
