package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// minRenderMemory is the least --render-memory accepted: a worker's data segment
// holds drift's runtime and libraries before it renders anything, and a small
// kustomization needs some 100 MiB of it (measured).
const minRenderMemory = 256 << 20

// renderLimitFlags bound the rendering of one target. They are the runner's: flags,
// never drift.yaml, since a repository must not raise its own limits.
type renderLimitFlags struct {
	timeout time.Duration
	memory  string
	output  string
	objects int
}

// addFlags registers the render limit flags.
func (r *renderLimitFlags) addFlags(f *pflag.FlagSet) {
	f.DurationVar(&r.timeout, "render-timeout", render.DefaultTimeout, "longest time rendering one target may take")
	f.StringVar(&r.memory, "render-memory", "1Gi", "most memory rendering one target may use (its own process)")
	f.StringVar(&r.output, "render-max-output", "64Mi", "largest output one target may render (Helm's template output, the rendered objects)")
	f.IntVar(&r.objects, "render-max-objects", render.DefaultObjects, "most objects one target may render")
}

// limits checks the flags and turns them into render limits.
func (r *renderLimitFlags) limits() (render.Limits, error) {
	l := render.DefaultLimits()
	if r.timeout <= 0 {
		return l, fmt.Errorf("--render-timeout must be positive, got %s", r.timeout)
	}
	if r.objects < 1 {
		return l, fmt.Errorf("--render-max-objects must be at least 1, got %d", r.objects)
	}
	memory, err := bytesFlag("render-memory", r.memory, minRenderMemory)
	if err != nil {
		return l, err
	}
	output, err := bytesFlag("render-max-output", r.output, 1)
	if err != nil {
		return l, err
	}
	l.Timeout, l.MemoryBytes, l.OutputBytes, l.Objects = r.timeout, memory, output, r.objects
	return l, nil
}

// bytesFlag parses the size flag --name, which must be at least min bytes.
func bytesFlag(name, value string, min int64) (int64, error) {
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return 0, fmt.Errorf("--%s %q is not a size: write it as 512Mi, 2Gi or a number of bytes", name, value)
	}
	n, ok := q.AsInt64()
	if !ok || n < min {
		return 0, fmt.Errorf("--%s must be at least %s, got %s", name, resource.NewQuantity(min, resource.BinarySI), value)
	}
	return n, nil
}

// renderCache is the run's render cache: every target rendered in a render worker
// under the limits, so a target that crashes its renderer or eats the runner becomes
// a failure of that target and the others are still reported.
func (o *commonOptions) renderCache(ctx context.Context, repo *source.Repo) (*render.Cache, error) {
	l, err := o.renderLimits.limits()
	if err != nil {
		return nil, err
	}
	return &render.Cache{Isolated: render.NewIsolated(ctx, repo.Root, l)}, nil
}
