package publish

import (
	"context"
	"fmt"

	"github.com/drift-gitops/drift/internal/github"
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
	body, err := r.md.get(commentBody)
	if err != nil {
		return err
	}
	rep := r.rep
	drift := rep.Summary.Changes() > 0 || !rep.Complete
	title := "Drift: the cluster does not match the repository (" + rep.Summary.Headline() + ")"
	how, err := pub.DriftIssue(ctx, marker, report.Fingerprint(rep), drift, title, body)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.deps.Stderr, "drift: %s\n", how)
	return nil
}
