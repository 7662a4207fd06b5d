package preview

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// splitDrift tells a pull request's own changes apart from drift already in the
// cluster. It previews the base's render of the target on the same cluster: only the
// objects the pull request changes are sent again, since an object rendered
// identically in base and head has the same prediction.
func (r *runner) splitDrift(ctx context.Context, t *Target) {
	if t.Rendered == nil || t.conn == nil || ctx.Err() != nil {
		return
	}
	if t.New {
		return // the change adds the target: everything it renders is the change's
	}
	if r.base.CheckPaths([]string{t.basePath(true)}) != nil {
		return // the base does not hold the target's path: everything in it is the pull request's
	}
	bres, err := r.renderIn(r.base, t, t.conn)
	if err != nil || len(bres.Failures) > 0 {
		t.splitNote = "drift already in the cluster could not be told apart from this change: the base does not render cleanly"
		return
	}
	head := map[object.Key]int{}
	for i, res := range t.Results {
		if t.owns(i) { // another shard tells its objects apart
			head[res.Object.ID().Key()] = i
		}
	}
	t.BasePredictions = make([]*dryrun.Result, len(t.Results))
	var toRun []render.Object
	var at []int
	for _, b := range bres.Objects {
		i, ok := head[b.ID().Key()]
		if !ok {
			continue // removed by the pull request: pruning reports it
		}
		if equality.Semantic.DeepEqual(b.Get().Object, t.Results[i].Object.Get().Object) {
			t.BasePredictions[i] = &t.Results[i]
			continue
		}
		toRun = append(toRun, b)
		at = append(at, i)
	}
	if len(toRun) == 0 {
		return
	}
	res := dryrun.Run(ctx, t.conn.Clients, toRun, t.dryRunOptions(r.opts, r.deps.Appliers))
	for j := range res {
		t.BasePredictions[at[j]] = &res[j]
	}
}

// basePath is the target's path as the base defines it (inBase), or as the head does.
func (t *Target) basePath(inBase bool) string {
	if inBase && len(t.BaseSpecs) > 0 {
		return t.BaseSpecs[0].Path
	}
	return t.Spec.Path
}
