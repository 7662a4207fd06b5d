package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/source"
)

// splitDrift tells a pull request's own changes apart from drift already in the
// cluster. It previews the base's render of each diffed target on the same cluster:
// only the objects the pull request changes are sent again, since an object rendered
// identically in base and head has the same prediction.
func (o *diffOptions) splitDrift(ctx context.Context, run *runState, base *source.Snapshot, cache *render.Cache) {
	for _, t := range run.all {
		if t.rendered == nil || t.conn == nil || ctx.Err() != nil {
			continue
		}
		if base.CheckPaths([]string{t.spec.Path}) != nil {
			continue // a new target: everything in it is the pull request's
		}
		bres, err := cache.Render(snapshotKey(base), base.FS, t.renderSpec(t.conn))
		if err != nil || len(bres.Failures) > 0 {
			t.splitNote = "drift already in the cluster could not be told apart from this change: the base does not render cleanly"
			continue
		}
		head := map[object.Key]int{}
		for i, r := range t.results {
			head[r.Object.ID().Key()] = i
		}
		t.baseResults = make([]*dryrun.Result, len(t.results))
		var toRun []render.Object
		var at []int
		for _, b := range bres.Objects {
			i, ok := head[b.ID().Key()]
			if !ok {
				continue // removed by the pull request: pruning reports it
			}
			if equality.Semantic.DeepEqual(b.Obj.Object, t.results[i].Object.Obj.Object) {
				t.baseResults[i] = &t.results[i]
				continue
			}
			toRun = append(toRun, b)
			at = append(at, i)
		}
		if len(toRun) == 0 {
			continue
		}
		res := dryrun.Run(ctx, t.conn.clients, toRun, t.dryRunOptions(o))
		for j := range res {
			t.baseResults[at[j]] = &res[j]
		}
	}
}

// splitResults turns a target's results into the two stories: what the pull request
// changes (the base's prediction against the head's) and the drift already there (the
// live object against the base's prediction).
func (t *runTarget) splitResults() (change, drift []dryrun.Result) {
	for i, r := range t.results {
		b := t.baseResults[i]
		switch {
		case b == nil || r.Err != nil:
			change = append(change, r) // new in the pull request, or an error as it is
		case b.Err != nil:
			r.Warnings = append(r.Warnings, dryrun.Message{Reason: dryrun.ReasonError, Message: fmt.Sprintf(
				"drift already in the cluster could not be told apart from this change: the base's preview failed (%s): the diff is against the live object", b.Err.Message)})
			change = append(change, r)
		default:
			predicted := b.Merged
			c := r
			if r.Live == nil {
				// Not in the cluster: both predictions are dry-run creations, whose
				// server-generated identity differs; compare them without it.
				// Both also hold values the server allocated (a Service's cluster IP).
				predicted, c.Merged = withoutIdentity(b.Merged), withoutIdentity(r.Merged)
				report.MarkAllocated(b.Object.Obj, predicted)
				report.MarkAllocated(r.Object.Obj, c.Merged)
			}
			c.Live = predicted
			change = append(change, c)
			d := dryrun.Result{Object: b.Object, ID: r.ID, Live: r.Live, Merged: b.Merged}
			drift = append(drift, d)
		}
	}
	return change, drift
}

// againstLive lists the objects whose change splitResults still diffs against the
// live object, for the report to head their diffs live/ rather than base/.
func (t *runTarget) againstLive() []object.ID {
	var ids []object.ID
	for i, r := range t.results {
		b := t.baseResults[i]
		if r.Err == nil && ((b == nil && r.Live != nil) || (b != nil && b.Err != nil)) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func withoutIdentity(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	out := u.DeepCopy()
	for _, f := range []string{"uid", "creationTimestamp", "resourceVersion", "generation", "managedFields"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	return out
}
