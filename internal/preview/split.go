package preview

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
)

// splitDrift tells a pull request's own changes apart from drift already in the
// cluster. It previews the base's render of each previewed target on the same
// cluster: only the objects the pull request changes are sent again, since an object
// rendered identically in base and head has the same prediction.
func (r *runner) splitDrift(ctx context.Context, p *Preview) {
	for _, t := range p.Targets {
		if t.Rendered == nil || t.conn == nil || ctx.Err() != nil {
			continue
		}
		if r.base.CheckPaths([]string{t.Spec.Path}) != nil {
			continue // a new target: everything in it is the pull request's
		}
		bres, err := r.deps.Cache.RenderSnapshot(r.base, t.renderSpec(t.conn))
		if err != nil || len(bres.Failures) > 0 {
			t.splitNote = "drift already in the cluster could not be told apart from this change: the base does not render cleanly"
			continue
		}
		head := map[object.Key]int{}
		for i, res := range t.Results {
			head[res.Object.ID().Key()] = i
		}
		t.BasePredictions = make([]*dryrun.Result, len(t.Results))
		var toRun []render.Object
		var at []int
		for _, b := range bres.Objects {
			i, ok := head[b.ID().Key()]
			if !ok {
				continue // removed by the pull request: pruning reports it
			}
			if equality.Semantic.DeepEqual(b.Obj.Object, t.Results[i].Object.Obj.Object) {
				t.BasePredictions[i] = &t.Results[i]
				continue
			}
			toRun = append(toRun, b)
			at = append(at, i)
		}
		if len(toRun) == 0 {
			continue
		}
		res := dryrun.Run(ctx, t.conn.Clients, toRun, t.dryRunOptions(r.opts))
		for j := range res {
			t.BasePredictions[at[j]] = &res[j]
		}
	}
}

// splitResults turns a target's results into the report's two stories: what the
// pull request changes (the base's prediction on the live side of the diff, the
// head's on the merged side) and the drift already there (the live object against
// the base's prediction).
func (t *Target) splitResults() (change, drift []dryrun.Result) {
	for i, head := range t.Results {
		base := t.BasePredictions[i]
		switch {
		case base == nil || head.Err != nil:
			change = append(change, head) // new in the pull request, or an error as it is
		case base.Err != nil:
			head.Warnings = append(head.Warnings, dryrun.Message{Reason: dryrun.ReasonError, Message: fmt.Sprintf(
				"drift already in the cluster could not be told apart from this change: the base's preview failed (%s): the diff is against the live object", base.Err.Message)})
			change = append(change, head)
		default:
			basePrediction, headPrediction := base.Merged, head.Merged
			if head.Live == nil {
				// Not in the cluster: both predictions are dry-run creations, whose
				// server-generated identity differs; compare them without it.
				// Both also hold values the server allocated (a Service's cluster IP).
				basePrediction, headPrediction = withoutIdentity(base.Merged), withoutIdentity(head.Merged)
				report.MarkAllocated(base.Object.Obj, basePrediction)
				report.MarkAllocated(head.Object.Obj, headPrediction)
			}
			c := head
			c.Live, c.Merged = basePrediction, headPrediction // the report's two sides: base/ → head/
			change = append(change, c)
			drift = append(drift, dryrun.Result{Object: base.Object, ID: head.ID, Live: head.Live, Merged: base.Merged})
		}
	}
	return change, drift
}

// againstLive lists the objects whose change splitResults still diffs against the
// live object, for the report to head their diffs live/ rather than base/.
func (t *Target) againstLive() []object.ID {
	var ids []object.ID
	for i, r := range t.Results {
		b := t.BasePredictions[i]
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
