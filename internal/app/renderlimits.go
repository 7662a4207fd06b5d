package app

import (
	"context"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// renderCache is the run's render cache: every target rendered in a render worker
// under the limits, so a target that crashes its renderer or eats the runner becomes
// a failure of that target and the others are still reported.
func (o *Run) renderCache(ctx context.Context, repo *source.Repo) (*render.Cache, error) {
	l, err := render.ParseLimits(o.RenderLimits)
	if err != nil {
		return nil, err
	}
	return &render.Cache{Isolated: render.NewIsolated(ctx, repo.Root, l)}, nil
}
