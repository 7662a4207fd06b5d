package entry

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
