package entry

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/inventory"
)

// normalize drops the fields that only record bookkeeping, so that they neither make
// an object look changed nor clutter its diff. For objects that do not exist yet, the
// server-generated uid and creationTimestamp are dropped too.
func normalize(u *unstructured.Unstructured, isNew bool) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	out := u.DeepCopy()
	unstructured.RemoveNestedField(out.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(out.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(out.Object, "metadata", "generation")
	if isNew {
		unstructured.RemoveNestedField(out.Object, "metadata", "uid")
		unstructured.RemoveNestedField(out.Object, "metadata", "creationTimestamp")
		dropGeneratedJobLabels(out)
	}
	return out
}

// markConditionTimes shows the times of u's status conditions as "(generated)": on a
// throwaway server, the server set them when drift loaded it (a CRD's Established),
// and they change with every run.
func markConditionTimes(u *unstructured.Unstructured) {
	if u == nil {
		return
	}
	conds, found, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if !found {
		return
	}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["lastTransitionTime"] != nil {
			m["lastTransitionTime"] = generatedValue
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
}

// markOwnerUID shows the apply-config inventory's uid that marks u as its member
// (kubectl's apply-owner annotation) as "(generated)": on a throwaway server, the
// server made the inventory's uid when drift loaded it, anew on every run.
func markOwnerUID(u *unstructured.Unstructured) {
	if u == nil {
		return
	}
	if a := u.GetAnnotations(); a[inventory.ApplyOwnerAnnotation] != "" {
		a[inventory.ApplyOwnerAnnotation] = generatedValue
		u.SetAnnotations(a)
	}
}

// jobUIDLabels are the Job controller's identity labels, which the server sets from
// the uid it generates on every dry-run create.
var jobUIDLabels = []string{"batch.kubernetes.io/controller-uid", "controller-uid"}

// generatedValue stands for a value the server generates anew on every dry run.
const generatedValue = "(generated)"

// dropGeneratedJobLabels shows a new Job's identity labels, which hold the uid the
// server generates on every dry-run create, as "(generated)", so that the same change
// gives the same report.
func dropGeneratedJobLabels(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	if gvk.Group != "batch" || gvk.Kind != "Job" {
		return
	}
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}} {
		labels, found, _ := unstructured.NestedStringMap(u.Object, path...)
		if !found {
			continue
		}
		for _, l := range jobUIDLabels {
			if _, ok := labels[l]; ok {
				labels[l] = generatedValue
			}
		}
		_ = unstructured.SetNestedStringMap(u.Object, labels, path...)
	}
}
