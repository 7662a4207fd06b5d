package fields

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Headers are u's managedFields entries without their field sets: manager,
// operation, API version and subresource, read from the object as it is. Asking who
// manages an object this way does not decode every entry's fields, as
// unstructured's GetManagedFields does. Entries that are not objects are left out.
func Headers(u *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	if u == nil {
		return nil
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	list, _ := meta["managedFields"].([]any)
	out := make([]metav1.ManagedFieldsEntry, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, metav1.ManagedFieldsEntry{Manager: str("manager"), Operation: metav1.ManagedFieldsOperationType(str("operation")),
			APIVersion: str("apiVersion"), Subresource: str("subresource"), FieldsType: str("fieldsType")})
	}
	return out
}
