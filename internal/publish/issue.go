package publish

import (
	"context"
	"fmt"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report"
)

// driftIssue keeps the drift issue of this target set up to date: open while there
// is drift (or the check is incomplete), its body the comment's markdown.
func (r *run) driftIssue(ctx context.Context, ghc github.Context, marker string) error {
	ghc.PR = 1 // an issue needs no pull request
	if err := ghc.Check(); err != nil {
		return err
	}
	pub, err := r.publisher(ghc)
	if err != nil {
		return err
	}
	return r.keepIssue(ctx, review{forge: pub, note: commentBody}, github.DriftLabel, marker)
}

// keepIssue keeps the target set's drift issue on the site's forge (forge.DriftIssue),
// its body the note's markdown.
func (r *run) keepIssue(ctx context.Context, site review, label, marker string) error {
	body, err := r.body(site, site.note)
	if err != nil {
		return err
	}
	rep := r.rep
	drift := rep.Summary.Changes() > 0 || !rep.Complete
	title := "Drift: the cluster does not match the repository (" + rep.Summary.Headline() + ")"
	how, err := forge.DriftIssue(ctx, site.forge, label, marker, report.Fingerprint(rep), drift, title, body, forge.Warn(r.deps.Warn))
	if err != nil {
		return err
	}
	fmt.Fprintf(r.deps.Stderr, "drift: %s\n", how)
	return nil
}
