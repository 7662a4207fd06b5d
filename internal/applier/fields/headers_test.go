package fields

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestHeadersAreGetManagedFieldsWithoutTheSets: Headers reads what GetManagedFields
// does, but for the field sets and times.
func TestHeadersAreGetManagedFieldsWithoutTheSets(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","managedFields":[
		{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}},
		{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","subresource":"status","fieldsType":"FieldsV1","fieldsV1":{"f:status":{}}},
		{"manager":"drift","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}]}}`)); err != nil {
		t.Fatal(err)
	}
	got := Headers(u)
	want := u.GetManagedFields()
	if len(got) != len(want) || len(got) != 3 {
		t.Fatalf("%d headers, %d entries", len(got), len(want))
	}
	for i := range want {
		w := want[i]
		w.Time, w.FieldsV1 = nil, nil
		if got[i] != w {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], w)
		}
	}
	if Headers(nil) != nil || len(Headers(&unstructured.Unstructured{Object: map[string]any{}})) != 0 {
		t.Error("an object without managedFields has headers")
	}
}
