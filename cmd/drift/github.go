package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/report"
)

// githubOptions are the flags of the GitHub side: posting the report to a pull
// request, the job summary, and a JSON copy for an artifact.
type githubOptions struct {
	Comment       bool
	Check         bool
	FailOnDeletes bool
	Token         string
	Repository    string
	PR            int
	APIURL        string
	HeadSHA       string
	StepSummary   string
	JSONReport    string
	Outputs       bool
	Issue         bool
	CommentFile   string
	Author        string

	// transport is the HTTP transport to GitHub; tests replace it.
	transport http.RoundTripper
}

func (g *githubOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&g.Comment, "github-comment", false, "post the report to the pull request as one comment, updated on every run, and report a check run (context from GITHUB_* variables)")
	f.BoolVar(&g.Check, "github-check", true, "with --github-comment: also report a check run named drift (or a commit status) on the head commit")
	f.BoolVar(&g.FailOnDeletes, "fail-on-deletes", false, "with --github-comment: the check fails when the change deletes objects")
	f.StringVar(&g.Token, "github-token", "", "GitHub token (default $GITHUB_TOKEN)")
	f.StringVar(&g.Repository, "github-repository", "", "owner/name (default $GITHUB_REPOSITORY)")
	f.IntVar(&g.PR, "github-pr", 0, "pull request number (default: from the event at $GITHUB_EVENT_PATH)")
	f.StringVar(&g.APIURL, "github-api-url", "", "GitHub API URL, for GitHub Enterprise Server (default $GITHUB_API_URL, else https://api.github.com)")
	f.StringVar(&g.Author, "github-author", "", "login drift's comment and drift issue are written by; marked comments and issues of anyone else are left alone (default: the token's user, or github-actions[bot] for an installation token; name a GitHub App's bot, such as my-app[bot], when using its token)")
	f.StringVar(&g.HeadSHA, "github-sha", "", "head commit for the check (default: the pull request's head, else $GITHUB_SHA)")
	f.StringVar(&g.StepSummary, "step-summary", "", "append the full markdown report to this file (default with --github-comment or --github-issue: $GITHUB_STEP_SUMMARY)")
	f.StringVar(&g.JSONReport, "json-report", "", "also write the JSON report to this file (for an artifact)")
	f.StringVar(&g.CommentFile, "comment-file", "", "write the pull request comment (size-limited markdown, with its marker) to this file instead of, or besides, posting it")
	f.BoolVar(&g.Outputs, "github-output", false, "write the step outputs has-changes, counts and report-json to $GITHUB_OUTPUT (the Action uses it)")
}

// context merges the flags over the Actions environment.
func (g *githubOptions) context(getenv func(string) string) (github.Context, error) {
	c, err := github.FromEnv(getenv)
	if err != nil {
		return c, err
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&c.Token, g.Token)
	set(&c.Repository, g.Repository)
	set(&c.APIURL, g.APIURL)
	set(&c.HeadSHA, g.HeadSHA)
	set(&c.Author, g.Author)
	set(&c.StepSummary, g.StepSummary)
	if g.PR > 0 {
		c.PR = g.PR
	}
	return c, nil
}

// publish writes the job summary and the JSON copy, then posts the comment and the
// check. The summary comes first, so it is there even when posting fails. A refusal
// from GitHub is returned; the caller decides the exit code.
func (o *diffOptions) publish(ctx context.Context, rep *report.Report) error {
	g := &o.github
	if g.JSONReport != "" {
		var buf bytes.Buffer
		if err := report.WriteJSON(&buf, rep); err != nil {
			return err
		}
		if err := writeFile(g.JSONReport, buf.Bytes()); err != nil {
			return fmt.Errorf("--json-report: %w", err)
		}
	}
	if g.Outputs {
		if err := writeOutputs(o.getenv("GITHUB_OUTPUT"), rep, g.JSONReport); err != nil {
			return err
		}
	}
	// The Actions environment is read only when the GitHub side was asked for.
	if !g.Comment && !g.Issue && g.StepSummary == "" && g.CommentFile == "" {
		return nil
	}
	ghc, err := g.context(o.getenv)
	if err != nil {
		return err
	}
	if ghc.StepSummary != "" {
		var buf bytes.Buffer
		if err := report.WriteMarkdown(&buf, rep, report.MarkdownOptions{MaxBytes: 1 << 20}); err != nil {
			return err
		}
		f, err := os.OpenFile(ghc.StepSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("failed to open the job summary %s: %w", ghc.StepSummary, err)
		}
		_, werr := f.Write(append(buf.Bytes(), '\n'))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("failed to write the job summary %s: %w", ghc.StepSummary, werr)
		}
	}
	var names []string
	for _, t := range rep.Targets {
		names = append(names, t.Name)
	}
	marker := github.Marker(names)
	var body bytes.Buffer
	if err := report.WriteMarkdown(&body, rep, report.MarkdownOptions{MaxBytes: github.MaxCommentBytes}); err != nil {
		return err
	}
	if g.CommentFile != "" {
		if err := writeFile(g.CommentFile, []byte(marker+"\n"+body.String())); err != nil {
			return fmt.Errorf("--comment-file: %w", err)
		}
	}
	if g.Issue {
		return o.driftIssue(ctx, ghc, rep, marker, body.String())
	}
	if !g.Comment {
		return nil
	}
	if err := ghc.Check(); err != nil {
		return err
	}
	pub, err := o.publisher(ghc)
	if err != nil {
		return err
	}
	how, err := pub.Comment(ctx, marker, body.String())
	if github.StatusCode(err) == http.StatusUnprocessableEntity {
		// Too long after all: the summary alone.
		body.Reset()
		if werr := report.WriteMarkdown(&body, rep, report.MarkdownOptions{SummaryOnly: true}); werr != nil {
			return werr
		}
		how, err = pub.Comment(ctx, marker, body.String())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.ErrOut, "drift: %s the pull request comment\n", how)
	if !g.Check {
		return nil
	}
	failed := !rep.Complete || (g.FailOnDeletes && rep.Summary.Delete > 0)
	var summary bytes.Buffer
	if err := report.WriteMarkdown(&summary, rep, report.MarkdownOptions{SummaryOnly: true}); err != nil {
		return err
	}
	how, err = pub.Check(ctx, failed, rep.Summary.Headline(), summary.String())
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.ErrOut, "drift: reported a %s on %s\n", how, ghc.HeadSHA)
	return nil
}

func writeFile(path string, data []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, data, 0o644)
}

// writeOutputs appends the step outputs the Action declares.
func writeOutputs(path string, rep *report.Report, jsonReport string) error {
	if path == "" {
		return fmt.Errorf("--github-output: GITHUB_OUTPUT is not set (it is in a GitHub Actions step)")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("--github-output: %w", err)
	}
	s := rep.Summary
	_, werr := fmt.Fprintf(f, "has-changes=%t\ncounts=%s\nadd=%d\nmodify=%d\ndelete=%d\nunchanged=%d\nerrors=%d\ncomplete=%t\nreport-json=%s\n",
		s.Changes() > 0, s.Line(), s.Add, s.Modify, s.Delete, s.Unchanged, s.Error, rep.Complete, jsonReport)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// driftIssue keeps the drift issue of this target set up to date.
func (o *diffOptions) driftIssue(ctx context.Context, ghc github.Context, rep *report.Report, marker, body string) error {
	ghc.PR = 1 // an issue needs no pull request
	if err := ghc.Check(); err != nil {
		return err
	}
	pub, err := o.publisher(ghc)
	if err != nil {
		return err
	}
	drift := rep.Summary.Changes() > 0 || !rep.Complete
	title := "Drift: the cluster does not match the repository (" + rep.Summary.Headline() + ")"
	how, err := pub.DriftIssue(ctx, marker, report.Fingerprint(rep), drift, title, body)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.ErrOut, "drift: %s\n", how)
	return nil
}

// publisher is the GitHub client, its warnings on stderr.
func (o *diffOptions) publisher(ghc github.Context) (*github.Publisher, error) {
	pub, err := github.NewPublisher(ghc, o.github.transport)
	if err != nil {
		return nil, err
	}
	pub.Warn = func(msg string) { o.warnf("%s", msg) }
	return pub, nil
}

// checkEarly fails before any work when the GitHub side is asked for but cannot be
// reached for lack of a token, a repository or a pull request.
func (g *githubOptions) checkEarly(getenv func(string) string) error {
	if !g.Comment && !g.Issue {
		return nil
	}
	c, err := g.context(getenv)
	if err != nil {
		return err
	}
	if g.Issue {
		c.PR = 1 // an issue needs no pull request
	}
	return c.Check()
}
