package preview

import (
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/shard"
	"github.com/drift-gitops/drift/internal/source"
)

// Planned renders the targets as Run renders them, without a cluster (Helm's default
// capabilities, no lookup), and lists what each renders, in plan order: what the
// shards of a run split among themselves, for drift report merge to check their
// reports against. Skipped and refused targets render nothing. seen, when set, is
// told every object rendered.
func Planned(cache *rendercache.Cache, targets []plan.Target, head *source.Snapshot, seen func(render.Object)) []shard.PlannedTarget {
	r := &runner{deps: Deps{Cache: cache}, head: head}
	out := make([]shard.PlannedTarget, 0, len(targets))
	clusters := plan.Clusters(targets)
	for _, pt := range targets {
		t := newTarget(pt)
		planned := shard.PlannedTarget{Name: pt.Name, Cluster: clusters[pt.Cluster]}
		if pt.Skipped == "" && pt.Refused == "" {
			if err := head.CheckPaths([]string{t.Spec.Path}); err == nil {
				if res, err := r.renderIn(head, t, nil); err == nil {
					for _, o := range res.Objects {
						if seen != nil {
							seen(o)
						}
						planned.Objects = append(planned.Objects, shard.PlannedObject{
							Group: o.ID().Group, Kind: o.ID().Kind, Name: o.Name(), Source: o.Source, Document: o.Doc})
					}
				}
			}
		}
		out = append(out, planned)
	}
	return out
}
