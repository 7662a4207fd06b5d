package publish

import (
	"context"
	"fmt"

	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report/write"
)

// noteMargin is what a note's budget keeps free below the forge's limit for the
// marker and what a forge's flavour adds (escapes, indents).
const noteMargin = 9000

// site publishes to one of Kinds (Gitea and Forgejo, Bitbucket, Azure DevOps): the
// comment file, then the tracked drift item, or the pull request's comment and the
// status.
func (r *run) site(ctx context.Context) error {
	o, k := r.opts, r.opts.Kind
	c, err := o.SiteContext(r.deps.Getenv)
	if err != nil {
		return err
	}
	if c.RunURL != "" {
		// The pipeline run's page holds its artifacts: the JSON and HTML reports the
		// templates upload.
		r.md.fullReport = "the artifacts of [the pipeline run](" + c.RunURL + ")"
		if o.HTMLReport != "" {
			r.md.htmlReport = "the artifacts of [the pipeline run](" + c.RunURL + ")"
		}
	}
	marker := forge.Marker(targetNames(r.rep))
	site := review{noun: k.Note, what: "the " + k.Review + " " + k.Note, note: siteNote(k), flavour: k.Flavour, tooLong: k.TooLong}
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
	if err := k.Check(c, !o.Issue); err != nil {
		return err
	}
	client, err := k.Open(c, r.deps.Transport)
	if err != nil {
		return err
	}
	site.forge = client
	if o.Issue {
		return r.keepIssue(ctx, site, DriftLabel, marker)
	}
	if err := r.review(ctx, site, marker); err != nil || !o.Check {
		return err
	}
	name := o.CheckName
	if name == "" {
		name = "drift"
	}
	status := forge.Status{Name: name, Failed: checkFails(r.rep), Description: r.rep.Summary.Headline(), Link: c.RunURL}
	if err := client.SetStatus(ctx, status); err != nil {
		return err
	}
	on := c.HeadSHA
	if c.PR > 0 && on == "" {
		on = fmt.Sprintf("%s %d", k.Review, c.PR)
	}
	fmt.Fprintf(r.deps.Stderr, "drift: set the status %q on %s\n", name, on)
	return nil
}

// DriftLabel labels (or tags) the tracked drift items on every forge of Kinds.
const DriftLabel = "drift"

// siteNote is the markdown variant that fits a note of kind k.
func siteNote(k *forge.Kind) write.MarkdownOptions {
	return write.MarkdownOptions{MaxBytes: max(k.MaxNoteBytes-noteMargin, k.MaxNoteBytes/2)}
}

// SiteContext merges the --<forge>-* overrides over what the forge's pipeline
// variables say.
func (o Options) SiteContext(getenv func(string) string) (forge.CI, error) {
	c, err := o.Kind.FromEnv(getenv)
	if err != nil {
		return c, err
	}
	return c.Merge(o.CI), nil
}
