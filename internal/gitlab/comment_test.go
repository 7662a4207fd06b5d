package gitlab

import (
	"context"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Comment writes the merge request's drift note for this target set as publish does
// (forge.Upsert): created, or updated in place.
func (p *Publisher) Comment(ctx context.Context, marker, body string) (string, error) {
	return forge.Upsert(ctx, p, marker, body, "note", forge.Warn(p.Warn))
}

// DriftIssue keeps the target set's drift issue as publish does (forge.DriftIssue).
func (p *Publisher) DriftIssue(ctx context.Context, marker, fingerprint string, drift bool, title, body string) (string, error) {
	return forge.DriftIssue(ctx, p, DriftLabel, marker, fingerprint, drift, title, body, forge.Warn(p.Warn))
}
