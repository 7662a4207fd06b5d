package app

import (
	"cmp"
	"context"
	"io/fs"
	"os"
	"strings"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/source"
	"github.com/drift-gitops/drift/internal/steplog"
)

// GitHub are the flags of the GitHub side: posting the report to a pull
// request, the job summary, and a JSON copy for an artifact.
type GitHub struct {
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

// Options are the flags as what to publish.
func (g *GitHub) Options() publish.Options {
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
func (o *Run) publish(ctx context.Context, rep *report.Report) error {
	opts, err := o.publishOptions()
	if err != nil {
		return err
	}
	opts.MarkdownTemplate, opts.HTMLReport, opts.HTMLArtifact = o.Report.MarkdownTemplate, o.Report.HTML, o.Report.HTMLArtifact
	// In an Actions step, errors are annotated on their manifests.
	opts.Annotate = o.cfg.Getenv("GITHUB_ACTIONS") == "true" && (opts.Outputs || opts.Comment || opts.Issue)
	if len(o.Targets) > 0 {
		opts.CheckName = "drift (" + strings.Join(o.Targets, ", ") + ")"
	}
	files := o.reportFiles(rep)
	return publish.Run(ctx, rep, opts, publish.Deps{
		Getenv:       o.cfg.Getenv,
		Stderr:       o.cfg.ErrOut,
		Commands:     steplog.CommandsTo(o.cfg.ErrOut),
		Warn:         func(msg string) { o.warnf("%s", msg) },
		DocumentLine: publish.DocumentLines(files),
		Files:        o.cfg.Files,
	})
}

// reportFiles are the files of the commit the report previews, where annotations
// find their lines: read again from the repository (the work tree for a run of
// it), or, where the repository does not have them (drift report merge on a
// runner that holds only the reports), the working directory's.
func (o *Run) reportFiles(rep *report.Report) fs.FS {
	if repo, err := source.Open(cmp.Or(o.Repo, ".")); err == nil {
		if snap, err := repo.Snapshot(rep.Commit); err == nil && (rep.Commit != "" || rep.Ref == "") {
			return snap.FS
		}
	}
	return os.DirFS(".")
}
