package publish

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/gitlab"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report/write"
)

// gitlabNote is what fits a merge request note: GitLab keeps up to 1,000,000
// characters, with room for what the GitLab flavour adds.
var gitlabNote = write.MarkdownOptions{MaxBytes: gitlab.MaxNoteBytes - 9000}

// gitlab publishes to GitLab: the note file, the drift issue or the merge request's
// note and commit status.
func (r *run) gitlab(ctx context.Context) error {
	o := r.opts
	c, err := o.GitLabContext(r.deps.Getenv)
	if err != nil {
		return err
	}
	if c.JobURL != "" {
		// The job's artifacts hold the JSON and HTML reports (the component uploads them).
		r.md.fullReport = "[the job's artifacts](" + c.JobURL + "/artifacts/browse)"
		if u := artifactURL(c.JobURL, o.HTMLReport); u != "" {
			r.md.htmlReport = "[the job's artifact](" + u + ")"
		}
	}
	marker := forge.Marker(targetNames(r.rep))
	site := review{noun: "note", what: "the merge request note", note: gitlabNote, flavour: GitLabFlavour, tooLong: gitlab.TooLong}
	if o.CommentFile != "" {
		body, err := r.body(site, site.note)
		if err != nil {
			return err
		}
		if err := files.Write(r.files(), o.CommentFile, []byte(marker+"\n"+body)); err != nil {
			return fmt.Errorf("--comment-file: %w", err)
		}
	}
	if !o.Comment && !o.Issue {
		return nil
	}
	if err := c.Check(!o.Issue); err != nil {
		return err
	}
	pub, err := gitlab.NewPublisher(c, r.deps.Transport)
	if err != nil {
		return err
	}
	site.forge = pub
	if o.Issue {
		return r.keepIssue(ctx, site, gitlab.DriftLabel, marker)
	}
	if err := r.review(ctx, site, marker); err != nil || !o.Check {
		return err
	}
	// The status links the HTML report among the job's artifacts, else (no HTML report,
	// or a URL over the 255 characters GitLab keeps) the job.
	if err := pub.Status(ctx, o.CheckName, checkFails(r.rep), r.rep.Summary.Headline(), artifactURL(c.JobURL, o.HTMLReport), c.JobURL); err != nil {
		return err
	}
	fmt.Fprintf(r.deps.Stderr, "drift: set the commit status on %s\n", c.HeadSHA)
	return nil
}

// artifactURL is where GitLab shows a file of the job's artifacts ("" when the job or
// the file is unknown, or the file is not under the job's directory, which artifacts
// paths must be).
func artifactURL(jobURL, file string) string {
	if jobURL == "" || file == "" || filepath.IsAbs(file) {
		return ""
	}
	clean := filepath.ToSlash(filepath.Clean(file))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return ""
	}
	segs := strings.Split(clean, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimSuffix(jobURL, "/") + "/artifacts/file/" + strings.Join(segs, "/")
}
