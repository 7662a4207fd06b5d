package report

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// lastApplied is kubectl's client-side apply annotation; on Secrets it holds values.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

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
	}
	return out
}

// toYAML renders an object with sorted keys, as kubectl diff does; nil is empty.
func toYAML(u *unstructured.Unstructured) (string, error) {
	if u == nil {
		return "", nil
	}
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func isSecret(u *unstructured.Unstructured) bool {
	if u == nil {
		return false
	}
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}
