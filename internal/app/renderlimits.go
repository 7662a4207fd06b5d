package app

import (
	"context"
	"fmt"

	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/render/worker"
	"github.com/drift-gitops/drift/internal/resultcache"
	"github.com/drift-gitops/drift/internal/source"
)

// renderCache is the run's render cache: every target rendered in a render worker
// under the limits, so a target that crashes its renderer or eats the runner becomes
// a failure of that target and the others are still reported.
func (o *Run) renderCache(ctx context.Context, repo *source.Repo) (*rendercache.Cache, error) {
	l, err := render.ParseLimits(o.RenderLimits)
	if err != nil {
		return nil, err
	}
	// DRIFT_RENDER_REUSE=off renders every target in both refs, to check that taking
	// a rendering from the other ref changes nothing (Cache.Equivalent).
	pool := worker.New(ctx, repo.Root, l)
	pool.Warm()
	c := &rendercache.Cache{Worker: pool, RenderBoth: o.cfg.Getenv("DRIFT_RENDER_REUSE") == "off"}
	if !o.NoCache && !c.RenderBoth && o.cache != nil {
		c.Store = resultcache.OpenRenders(o.cache.Sub(resultCacheDir), resultcache.BuildID())
	}
	return c, nil
}

// saveRenders keeps the run's renderings for the next run (rendercache.Cache.Save),
// their Secrets' values sealed, but for those that hold any string the run knows as
// a secret (pl.Secrets, told to the scrubber here, a decrypted value, a masked one).
//
// say has it say on stderr, as the dry-run cache does, how the run got its
// renderings (the report never says, so that it is the same however they came).
func (o *Run) saveRenders(pl *plan.Plan, say bool) {
	if pl == nil || pl.Cache == nil {
		return
	}
	sc := o.scrub
	for _, v := range pl.Secrets {
		sc.AddSecretData(v)
	}
	taken, kept := pl.Cache.Save(func(data []byte) bool { return sc.Holds(string(data)) })
	if made, reused := pl.Cache.Made(), pl.Cache.Reused(); say && made+reused+taken > 0 {
		o.errMu.Lock()
		defer o.errMu.Unlock()
		fmt.Fprintf(o.cfg.ErrOut, "drift: renderings: %d made, %d the same in both refs, %d taken from the cache; %d kept for the next run\n", made, reused, taken, kept)
	}
}
