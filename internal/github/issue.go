package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v60/github"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// DriftLabel labels drift issues.
const DriftLabel = "drift"

// Issues lists the repository's issues with the label, open and closed (pull
// requests, which GitHub lists among issues, left out).
func (p *Publisher) Issues(ctx context.Context, label string, each func(forge.Issue) bool) error {
	opts := &gh.IssueListByRepoOptions{State: "all", Labels: []string{label}, ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		issues, resp, err := p.client.Issues.ListByRepo(ctx, p.ctx.Owner(), p.ctx.Repo(), opts)
		if err != nil {
			return p.explain("list the drift issues", err)
		}
		for _, is := range issues {
			if is.IsPullRequest() {
				continue
			}
			if !each(forge.Issue{ID: int64(is.GetNumber()), Body: is.GetBody(), Open: is.GetState() != "closed", Author: is.GetUser().GetLogin()}) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// CreateIssue opens an issue with the label.
func (p *Publisher) CreateIssue(ctx context.Context, title, body, label string) (forge.Issue, error) {
	created, _, err := p.client.Issues.Create(ctx, p.ctx.Owner(), p.ctx.Repo(), &gh.IssueRequest{Title: &title, Body: &body, Labels: &[]string{label}})
	if err != nil {
		return forge.Issue{}, p.explain("open the drift issue", err)
	}
	p.checkCreatedBy("issue", created.GetUser())
	return forge.Issue{ID: int64(created.GetNumber()), Body: created.GetBody(), Open: true, Author: created.GetUser().GetLogin()}, nil
}

// EditIssue changes an issue's title, body or state.
func (p *Publisher) EditIssue(ctx context.Context, id int64, e forge.IssueEdit) error {
	req := &gh.IssueRequest{Title: e.Title, Body: e.Body}
	what := "update the drift issue"
	if e.Open != nil {
		state, verb := "closed", "close the drift issue"
		if *e.Open {
			state, verb = "open", "reopen the drift issue"
		}
		req.State, what = &state, verb
	}
	if _, _, err := p.client.Issues.Edit(ctx, p.ctx.Owner(), p.ctx.Repo(), int(id), req); err != nil {
		return p.explain(what, err)
	}
	return nil
}

// CommentOnIssue comments on an issue.
func (p *Publisher) CommentOnIssue(ctx context.Context, id int64, body string) error {
	if _, _, err := p.client.Issues.CreateComment(ctx, p.ctx.Owner(), p.ctx.Repo(), int(id), &gh.IssueComment{Body: &body}); err != nil {
		return p.explain("comment on the drift issue", err)
	}
	return nil
}

// IssueRef is "#N".
func (p *Publisher) IssueRef(id int64) string { return fmt.Sprintf("#%d", id) }

// EnsureLabel creates the label when the repository has not got it.
func (p *Publisher) EnsureLabel(ctx context.Context, label string) error {
	_, _, err := p.client.Issues.GetLabel(ctx, p.ctx.Owner(), p.ctx.Repo(), label)
	if err == nil {
		return nil
	}
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusNotFound {
		return p.explain("read the drift label", err)
	}
	_, _, err = p.client.Issues.CreateLabel(ctx, p.ctx.Owner(), p.ctx.Repo(), &gh.Label{Name: gh.String(label), Color: gh.String("d93f0b"),
		Description: gh.String("The cluster no longer matches the repository (drift detect)")})
	if err != nil {
		return p.explain("create the drift label", err)
	}
	return nil
}
