package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// ActionsBot is the login of the token GitHub Actions gives a workflow (GITHUB_TOKEN).
const ActionsBot = "github-actions[bot]"

// Author returns the login drift writes as: Context.Author when set, else the token's
// own user (GET /user). GitHub refuses /user to an installation token (403 "Resource
// not accessible by integration"), and the installation token a workflow gets is
// GITHUB_TOKEN, which writes as github-actions[bot]. Another GitHub App's token writes
// as that App's bot and needs Context.Author (--github-author). The answer is asked
// once per publisher.
func (p *Publisher) Author(ctx context.Context) (string, error) {
	if p.author != "" {
		return p.author, nil
	}
	u, _, err := p.client.Users.Get(ctx, "")
	switch {
	case err == nil && u.GetLogin() != "":
		p.author = u.GetLogin()
	case StatusCode(err) == http.StatusForbidden:
		// Any 403 falls back: it only narrows what drift takes for its own.
		p.author = ActionsBot
	case err == nil:
		return "", fmt.Errorf("GitHub's answer to GET /user has no login: pass --github-author")
	default:
		return "", p.explain("learn whom the token belongs to (GET /user; or pass --github-author)", err)
	}
	return p.author, nil
}

// checkCreatedBy warns when GitHub says drift wrote as someone else than it believes
// (another GitHub App's token): the next run would not recognise what it wrote.
func (p *Publisher) checkCreatedBy(what string, u *gh.User) {
	if p.author == "" || p.Warn == nil || u == nil || strings.EqualFold(u.GetLogin(), p.author) {
		return
	}
	p.Warn(fmt.Sprintf("the %s was written as %s, not %s: pass --github-author %s (the Action's github-author input) so the next run updates it instead of writing another",
		what, u.GetLogin(), p.author, u.GetLogin()))
}
