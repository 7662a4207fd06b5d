package forge

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Status is a run's result as the forge shows it on the commit the pipeline runs (a
// commit status, a build status, a pull request status).
type Status struct {
	// Name tells drift's statuses apart: "drift", or "drift (shop-prod, web)" for a
	// part of the targets.
	Name   string
	Failed bool
	// Description is the report's headline ("2 to add, 1 to change"); each forge cuts
	// it to what it keeps.
	Description string
	// Link is the pipeline run's page, where the report artifact is ("" for none).
	Link string
}

// Site is a forge's client for one repository, and one pull request when previewing
// one: the notes and issues of Forge, and the status.
type Site interface {
	Forge
	// SetStatus sets the status on CI.HeadSHA (the commit the pipeline runs), or on the
	// pull request where the forge keeps statuses there.
	SetStatus(ctx context.Context, s Status) error
}

// CI is where a report goes, as a forge's pipeline variables describe it; every field
// can be set by a flag instead (--forge-*).
type CI struct {
	// Token is read from the runner's environment (Kind.TokenVariables) or a flag;
	// it is sent to APIURL's origin only.
	Token string
	// APIURL is the forge's REST API (https://api.bitbucket.org/2.0,
	// https://gitea.example/api/v1, https://dev.azure.com/org/).
	APIURL string
	// Repository names the repository as the forge's API does: owner/name (Gitea),
	// workspace/slug (Bitbucket Cloud), PROJECT/slug (Bitbucket Data Center),
	// project/repository (Azure DevOps, in the organization APIURL names).
	Repository string
	// PR is the pull request's number (or ID); 0 outside one.
	PR int64
	// HeadSHA is the commit the pipeline runs, which the status is set on.
	HeadSHA string
	// BaseSHA is the commit the pull request's change is compared with, when the
	// pipeline's variables say ("" when they do not: --base is then needed).
	BaseSHA string
	// Branches are the branches the run stands for: the pull request's target and
	// source branches, else the branch the pipeline runs for.
	Branches []string
	// RunURL is the pipeline run's page, where its artifacts are ("" when unknown).
	RunURL string
	// Author is the user drift writes as, when the forge's API cannot say (a token
	// that cannot read its own user); "" asks the API.
	Author string
}

// Kind is one forge drift publishes to beside GitHub and GitLab: how its pipelines
// describe a run, how its client is made, and how it words and renders a note.
type Kind struct {
	// Name is the forge's ("Gitea"), Flag the prefix of its flags ("gitea" for
	// --gitea-comment and --gitea-issue).
	Name, Flag string
	// Note names a note ("comment"), Review the review ("pull request"), Tracked the
	// tracked item ("issue", "work item").
	Note, Review, Tracked string
	// MaxNoteBytes is the most a note's body may hold, marker included.
	MaxNoteBytes int
	// TokenVariables are the environment variables a token is read from, in order;
	// Secrets every variable of the forge's pipelines that holds a credential
	// (scrubbed from every output).
	TokenVariables, Secrets []string
	// InCI says whether getenv is one of the forge's pipelines.
	InCI func(getenv func(string) string) bool
	// FromEnv reads the pipeline's variables; a variable set but malformed is an
	// error naming it.
	FromEnv func(getenv func(string) string) (CI, error)
	// Open makes the client; base carries its requests (nil: http.DefaultTransport).
	Open func(ci CI, base http.RoundTripper) (Site, error)
	// Flavour adapts drift's markdown to the forge's renderer: what the repository or
	// the cluster controls stays inert (no mention, link, image, command or HTML).
	Flavour func(md string) string
	// StatusCode is the HTTP status of the forge's error (0 when none).
	StatusCode func(err error) int
	// TooLong says whether err is the forge refusing a note for its size.
	TooLong func(err error) bool
	// Docs is the page that explains the forge's set-up (docs/gitea.md).
	Docs string
}

// Check says what is missing to post to a pull request (review) or to the
// repository's tracker (!review).
func (k *Kind) Check(c CI, review bool) error {
	var missing []string
	flag := "--" + k.Flag + "-"
	if c.Token == "" {
		missing = append(missing, "a token ("+strings.Join(k.TokenVariables, " or ")+", or "+flag+"token)")
	}
	if c.APIURL == "" {
		missing = append(missing, "the API URL ("+flag+"api-url)")
	}
	if c.Repository == "" {
		missing = append(missing, "the repository ("+flag+"repository)")
	}
	if review && c.PR <= 0 {
		missing = append(missing, "the "+k.Review+" ("+flag+"pr, or a "+k.Review+" pipeline)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("cannot post to %s: missing %s (%s)", k.Name, strings.Join(missing, ", "), k.Docs)
	}
	return nil
}

// Merge sets each field of over that is set on c.
func (c CI) Merge(over CI) CI {
	for _, f := range []struct {
		dst *string
		v   string
	}{{&c.Token, over.Token}, {&c.APIURL, over.APIURL}, {&c.Repository, over.Repository}, {&c.HeadSHA, over.HeadSHA},
		{&c.BaseSHA, over.BaseSHA}, {&c.RunURL, over.RunURL}, {&c.Author, over.Author}} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	if over.PR > 0 {
		c.PR = over.PR
	}
	if len(over.Branches) > 0 {
		c.Branches = over.Branches
	}
	return c
}
