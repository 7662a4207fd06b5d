package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// DriftLabel labels drift issues.
const DriftLabel = "drift"

// fingerprintLine carries the findings' fingerprint in an issue's body.
func fingerprintLine(fp string) string { return "<!-- drift:fingerprint=" + fp + " -->" }

// DriftIssue keeps one issue for the target set named by marker: opened when drift
// appears, its body updated when the findings' fingerprint changes, closed with a
// comment when drift is gone, reopened when it comes back. Nothing is written when
// nothing changed. It returns what it did.
func (p *Publisher) DriftIssue(ctx context.Context, marker, fingerprint string, drift bool, title, body string) (string, error) {
	owner, repo := p.ctx.Owner(), p.ctx.Repo()
	issue, err := p.findIssue(ctx, marker)
	if err != nil {
		return "", err
	}
	full := marker + "\n" + fingerprintLine(fingerprint) + "\n" + body
	switch {
	case !drift && (issue == nil || issue.GetState() == "closed"):
		return "nothing to do (no drift, no open issue)", nil
	case !drift:
		msg := "The cluster matches the repository again: drift found no differences. Closing."
		if _, _, err := p.client.Issues.CreateComment(ctx, owner, repo, issue.GetNumber(), &gh.IssueComment{Body: &msg}); err != nil {
			return "", p.explain("comment on the drift issue", err)
		}
		if _, _, err := p.client.Issues.Edit(ctx, owner, repo, issue.GetNumber(), &gh.IssueRequest{State: gh.String("closed")}); err != nil {
			return "", p.explain("close the drift issue", err)
		}
		return fmt.Sprintf("closed issue #%d", issue.GetNumber()), nil
	case issue == nil:
		if err := p.ensureLabel(ctx); err != nil {
			return "", err
		}
		created, _, err := p.client.Issues.Create(ctx, owner, repo, &gh.IssueRequest{Title: &title, Body: &full, Labels: &[]string{DriftLabel}})
		if err != nil {
			return "", p.explain("open the drift issue", err)
		}
		p.checkCreatedBy("issue", created.GetUser())
		return fmt.Sprintf("opened issue #%d", created.GetNumber()), nil
	case issue.GetState() == "closed":
		if _, _, err := p.client.Issues.Edit(ctx, owner, repo, issue.GetNumber(), &gh.IssueRequest{State: gh.String("open"), Title: &title, Body: &full}); err != nil {
			return "", p.explain("reopen the drift issue", err)
		}
		return fmt.Sprintf("reopened issue #%d", issue.GetNumber()), nil
	case strings.Contains(issue.GetBody(), fingerprintLine(fingerprint)):
		return fmt.Sprintf("issue #%d is up to date (the drift did not change)", issue.GetNumber()), nil
	}
	if _, _, err := p.client.Issues.Edit(ctx, owner, repo, issue.GetNumber(), &gh.IssueRequest{Title: &title, Body: &full}); err != nil {
		return "", p.explain("update the drift issue", err)
	}
	return fmt.Sprintf("updated issue #%d", issue.GetNumber()), nil
}

// findIssue returns the newest drift issue with the marker that drift's own login
// opened, open or closed. Anyone can open an issue whose body starts with the marker;
// such issues are never edited, closed or reopened.
func (p *Publisher) findIssue(ctx context.Context, marker string) (*gh.Issue, error) {
	opts := &gh.IssueListByRepoOptions{State: "all", Labels: []string{DriftLabel}, ListOptions: gh.ListOptions{PerPage: 100}}
	var found *gh.Issue
	var others []string
	for {
		issues, resp, err := p.client.Issues.ListByRepo(ctx, p.ctx.Owner(), p.ctx.Repo(), opts)
		if err != nil {
			return nil, p.explain("list the drift issues", err)
		}
		for _, is := range issues {
			if is.IsPullRequest() || !strings.HasPrefix(is.GetBody(), marker) {
				continue
			}
			mine, err := p.wroteBy(ctx, is.GetUser())
			if err != nil {
				return nil, err
			}
			if !mine {
				others = append(others, is.GetUser().GetLogin())
				continue
			}
			if found == nil || is.GetNumber() > found.GetNumber() {
				found = is
			}
		}
		if resp.NextPage == 0 {
			if found == nil {
				p.leftAlone("issue", others)
			}
			return found, nil
		}
		opts.Page = resp.NextPage
	}
}

func (p *Publisher) ensureLabel(ctx context.Context) error {
	_, _, err := p.client.Issues.GetLabel(ctx, p.ctx.Owner(), p.ctx.Repo(), DriftLabel)
	if err == nil {
		return nil
	}
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusNotFound {
		return p.explain("read the drift label", err)
	}
	_, _, err = p.client.Issues.CreateLabel(ctx, p.ctx.Owner(), p.ctx.Repo(), &gh.Label{Name: gh.String(DriftLabel), Color: gh.String("d93f0b"),
		Description: gh.String("The cluster no longer matches the repository (drift detect)")})
	if err != nil {
		return p.explain("create the drift label", err)
	}
	return nil
}
