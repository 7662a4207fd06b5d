package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/discover"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// addRenderLimitFlags registers the flags that bound the rendering of one target,
// and discovery's count of targets.
func addRenderLimitFlags(f *pflag.FlagSet, s *render.LimitSettings, maxTargets *int) {
	f.IntVar(maxTargets, "max-targets", discover.DefaultMaxTargets, "most targets discovery makes from the repository's Argo CD and Flux objects (what would make more is an error naming it; the rest is reported)")
	f.DurationVar(&s.Timeout, "render-timeout", render.DefaultTimeout, "longest time rendering one target may take")
	f.StringVar(&s.Memory, "render-memory", "1Gi", "most memory rendering one target may use (its own process)")
	f.StringVar(&s.Output, "render-max-output", "64Mi", "largest output one target may render (Helm's template output, the rendered objects)")
	f.IntVar(&s.Objects, "render-max-objects", render.DefaultObjects, "most objects one target may render")
}

// renderCache is the run's render cache: every target rendered in a render worker
// under the limits, so a target that crashes its renderer or eats the runner becomes
// a failure of that target and the others are still reported.
func (o *commonOptions) renderCache(ctx context.Context, repo *source.Repo) (*render.Cache, error) {
	l, err := render.ParseLimits(o.renderLimits)
	if err != nil {
		return nil, err
	}
	return &render.Cache{Isolated: render.NewIsolated(ctx, repo.Root, l)}, nil
}
