package entry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

// stories are a split object's two stories: the change, with the sides its diff
// compares, and the drift already there (nil when there is none to tell apart).
//   - the change is the base's prediction against the head's (base/ → head/);
//   - the drift is the live object against the base's prediction (live/ → base/);
//   - an object the base does not render, or whose base preview failed, is diffed
//     against the live object (live/ → head/), the failure said in a warning.
func stories(s Split) (change dryrun.Result, sd report.Sides, drift *dryrun.Result) {
	head, base := s.Head, s.Base
	switch {
	case head.Err != nil:
		return head, report.SidesChange, nil
	case base == nil:
		if head.Live == nil {
			return head, report.SidesChange, nil // new in the pull request: no side but the head's
		}
		return head, report.SidesChangeLive, nil
	case base.Err != nil:
		head.Warnings = append(append([]dryrun.Message{}, head.Warnings...), dryrun.Message{Reason: reason.Error, Message: fmt.Sprintf(
			"drift already in the cluster could not be told apart from this change: the base's preview failed (%s): the diff is against the live object", base.Err.Message)})
		return head, report.SidesChangeLive, nil
	}
	basePrediction, headPrediction := base.Merged, head.Merged
	if head.Live == nil {
		// Not in the cluster: both predictions are dry-run creations, whose
		// server-generated identity differs; compare them without it. Both also hold
		// values the server allocated (a Service's cluster IP).
		basePrediction, headPrediction = withoutIdentity(base.Merged), withoutIdentity(head.Merged)
		markAllocated(base.Object.Get(), nil, basePrediction)
		markAllocated(head.Object.Get(), nil, headPrediction)
	}
	change = head
	// An entry diffs Live against Merged: here the two predictions.
	change.Live, change.Merged = basePrediction, headPrediction
	return change, report.SidesChange, &dryrun.Result{Object: base.Object, ID: head.ID, Live: head.Live, Merged: base.Merged}
}

// withoutIdentity is a copy of u without what the server makes up on each dry-run
// creation.
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
