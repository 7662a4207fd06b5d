package publish

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/steplog"
)

// Run publishes rep as opts say: the JSON copy and the step outputs, then the job
// summary, the comment file, and the drift issue or the pull request's comment and
// check. The files come first, so they are there even when posting fails. A refusal
// from GitHub is returned (github.StatusCode tells a fork's read-only token, 403);
// the caller decides the exit code.
func Run(ctx context.Context, rep *report.Report, opts Options, deps Deps) error {
	return newRun(rep, opts, deps).publish(ctx)
}

// run is one publication of one report.
type run struct {
	rep  *report.Report
	opts Options
	deps Deps
	md   *markdown
}

func newRun(rep *report.Report, opts Options, deps Deps) *run {
	if deps.Stderr == nil {
		deps.Stderr = io.Discard
	}
	return &run{rep: rep, opts: opts, deps: deps, md: newMarkdown(rep, opts.MarkdownTemplate)}
}

func (r *run) publish(ctx context.Context) error {
	o := r.opts
	if o.JSONReport != "" {
		if err := r.writeJSONReport(o.JSONReport); err != nil {
			return err
		}
	}
	if o.Annotate {
		commands := r.deps.Commands
		if commands == nil {
			commands = steplog.CommandsTo(r.deps.Stderr)
		}
		if err := annotate(commands, r.rep, r.deps.DocumentLine); err != nil {
			return err
		}
	}
	if o.Outputs {
		if err := r.writeOutputs(r.deps.Getenv("GITHUB_OUTPUT"), o.JSONReport, o.HTMLReport); err != nil {
			return err
		}
	}
	if o.Dotenv != "" {
		if err := r.writeDotenv(o.Dotenv, o.JSONReport, o.HTMLReport); err != nil {
			return err
		}
	}
	if o.Forge == GitLab && (o.Comment || o.Issue || o.CommentFile != "") {
		if err := r.gitlab(ctx); err != nil {
			return err
		}
	}
	if o.Kind != nil && (o.Comment || o.Issue || o.CommentFile != "") {
		if err := r.site(ctx); err != nil {
			return err
		}
	}
	// The Actions environment is read only when the GitHub side was asked for.
	if !o.wantsGitHub() {
		return nil
	}
	ghc, err := o.Context(r.deps.Getenv)
	if err != nil {
		return err
	}
	if ghc.RunURL != "" {
		r.md.fullReport = "[the job summary](" + ghc.RunURL + ")"
		if o.HTMLArtifact != "" && o.HTMLReport != "" {
			r.md.htmlReport = "the artifact " + write.CodeSpan(o.HTMLArtifact) + " of [this run](" + ghc.RunURL + ")"
		}
	}
	if ghc.StepSummary != "" {
		md, err := r.md.get(jobSummary)
		if err != nil {
			return err
		}
		if err := r.appendStepSummary(ghc.StepSummary, md); err != nil {
			return err
		}
	}
	marker := forge.Marker(targetNames(r.rep))
	if o.Forge == GitLab || o.Kind != nil {
		return nil
	}
	if o.CommentFile != "" {
		body, err := r.md.get(commentBody)
		if err != nil {
			return err
		}
		if err := files.Write(r.files(), o.CommentFile, []byte(marker+"\n"+body)); err != nil {
			return fmt.Errorf("--comment-file: %w", err)
		}
	}
	switch {
	case o.Issue:
		return r.driftIssue(ctx, ghc, marker)
	case o.Comment:
		return r.comment(ctx, ghc, marker)
	}
	return nil
}

// comment posts the pull request's comment, then the check.
func (r *run) comment(ctx context.Context, ghc github.Context, marker string) error {
	if err := ghc.Check(); err != nil {
		return err
	}
	pub, err := r.publisher(ghc)
	if err != nil {
		return err
	}
	site := review{forge: pub, noun: "comment", what: "the pull request comment", note: commentBody, tooLong: func(err error) bool {
		// Too long after all (GitHub counts differently).
		return github.StatusCode(err) == http.StatusUnprocessableEntity
	}}
	if err := r.review(ctx, site, marker); err != nil || !r.opts.Check {
		return err
	}
	summary, err := r.md.get(summaryOnly)
	if err != nil {
		return err
	}
	text, err := r.md.get(checkText)
	if err != nil {
		return err
	}
	how, err := pub.Check(ctx, r.opts.CheckName, checkFails(r.rep), r.rep.Summary.Headline(), summary, text)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.deps.Stderr, "drift: reported a %s on %s\n", how, ghc.HeadSHA)
	return nil
}

// review is a forge's review (a pull or merge request) as publishing needs it: the
// note's client, its name, its markdown and how the forge says a body is too long.
type review struct {
	forge forge.Forge
	// noun names a note in warnings ("comment"), what the review's in messages.
	noun, what string
	// note is the markdown variant of the note; flavour, when set, adapts each body
	// to the forge's markdown.
	note    write.MarkdownOptions
	flavour func(string) string
	tooLong func(error) bool
}

// body is a markdown variant in the review's flavour.
func (r *run) body(site review, variant write.MarkdownOptions) (string, error) {
	md, err := r.md.get(variant)
	if err != nil || site.flavour == nil {
		return md, err
	}
	return site.flavour(md), nil
}

// review writes the review's drift note, or the summary alone when the forge finds
// the full one too long.
func (r *run) review(ctx context.Context, site review, marker string) error {
	body, err := r.body(site, site.note)
	if err != nil {
		return err
	}
	warn := forge.Warn(r.deps.Warn)
	how, err := forge.Upsert(ctx, site.forge, marker, body, site.noun, warn)
	if site.tooLong(err) {
		summary, merr := r.body(site, summaryOnly)
		if merr != nil {
			return merr
		}
		how, err = forge.Upsert(ctx, site.forge, marker, summary, site.noun, warn)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(r.deps.Stderr, "drift: %s %s\n", how, site.what)
	return nil
}

// checkFails says whether the check fails: the report is incomplete, or it fails
// the policy the run was given (policy.Apply), as the exit code does.
func checkFails(rep *report.Report) bool {
	return !rep.Complete || rep.PolicyFailed()
}

// publisher is the GitHub client, its warnings passed on.
func (r *run) publisher(ghc github.Context) (*github.Publisher, error) {
	pub, err := github.NewPublisher(ghc, r.deps.Transport)
	if err != nil {
		return nil, err
	}
	pub.Warn = r.deps.Warn
	return pub, nil
}

func targetNames(rep *report.Report) []string {
	names := make([]string, 0, len(rep.Targets))
	for _, t := range rep.Targets {
		names = append(names, t.Name)
	}
	return names
}
