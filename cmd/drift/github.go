package main

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/steplog"
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
}

// addFlags registers the GitHub side's flags but detect's --github-issue.
func (g *githubOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&g.Comment, "github-comment", false, "post the report to the pull request as one comment, updated on every run, and report a check run (context from GITHUB_* variables)")
	f.BoolVar(&g.Check, "github-check", true, "with --github-comment: also report a check run named drift (or a commit status) on the head commit")
	f.BoolVar(&g.FailOnDeletes, "fail-on-deletes", false, "fail when the change deletes objects: the same as --fail-on delete")
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

// options are the flags as what to publish.
func (g *githubOptions) options() publish.Options {
	return publish.Options{
		JSONReport:  g.JSONReport,
		Outputs:     g.Outputs,
		Comment:     g.Comment,
		Check:       g.Check,
		Issue:       g.Issue,
		CommentFile: g.CommentFile,
		GitHub: github.Context{Token: g.Token, Repository: g.Repository, APIURL: g.APIURL, PR: g.PR,
			HeadSHA: g.HeadSHA, Author: g.Author, StepSummary: g.StepSummary},
	}
}

// publish publishes the report as the flags say; a refusal from GitHub is returned
// and the caller decides the exit code.
func (o *commonOptions) publish(ctx context.Context, rep *report.Report) error {
	opts, err := o.publishOptions()
	if err != nil {
		return err
	}
	opts.MarkdownTemplate, opts.HTMLReport, opts.HTMLArtifact = o.report.MarkdownTemplate, o.report.HTML, o.report.HTMLArtifact
	// In an Actions step, errors are annotated on their manifests.
	opts.Annotate = o.getenv("GITHUB_ACTIONS") == "true" && (opts.Outputs || opts.Comment || opts.Issue)
	if len(o.Targets) > 0 {
		opts.CheckName = "drift (" + strings.Join(o.Targets, ", ") + ")"
	}
	files := o.files
	if files == nil {
		files = os.DirFS(".")
	}
	return publish.Run(ctx, rep, opts, publish.Deps{
		Getenv:       o.getenv,
		Stderr:       o.streams.ErrOut,
		Commands:     steplog.CommandsTo(o.streams.ErrOut),
		Warn:         func(msg string) { o.warnf("%s", msg) },
		DocumentLine: publish.DocumentLines(files),
	})
}
