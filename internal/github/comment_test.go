package github

import (
	"context"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Comment writes the pull request's drift comment for this target set as publish
// does (forge.Upsert): created, or updated in place.
func (p *Publisher) Comment(ctx context.Context, marker, body string) (string, error) {
	return forge.Upsert(ctx, p, marker, body, "comment", forge.Warn(p.Warn))
}

// Marker is the hidden line a drift comment starts with (forge.Marker).
func Marker(targets []string) string { return forge.Marker(targets) }

// DriftIssue keeps the target set's drift issue as publish does (forge.DriftIssue).
func (p *Publisher) DriftIssue(ctx context.Context, marker, fingerprint string, drift bool, title, body string) (string, error) {
	return forge.DriftIssue(ctx, p, DriftLabel, marker, fingerprint, drift, title, body, forge.Warn(p.Warn))
}
