package serverside

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/drift-gitops/drift/internal/applier"
)

// TestBodyNeverPinsTheResourceVersionNorChangesTheObject: the body sent leaves out
// metadata.resourceVersion and keeps everything else; the object it is made from,
// which the caller still reads, is left as it was.
func TestBodyNeverPinsTheResourceVersionNorChangesTheObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want map[string]any
	}{
		{
			name: "pinned",
			obj: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "resourceVersion": "42", "labels": map[string]any{"x": "y"}},
				"data": map[string]any{"k": "v"}},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}},
				"data": map[string]any{"k": "v"}},
		},
		{
			name: "not pinned",
			obj:  map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}},
		},
		{
			name: "metadata not a map",
			obj:  map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": "odd"},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": "odd"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := runtime.DeepCopyJSON(tc.obj)
			body, err := Body(applier.Object{Obj: &unstructured.Unstructured{Object: tc.obj}})
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("body = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.obj, before) {
				t.Errorf("the object was changed: %v, was %v", tc.obj, before)
			}
		})
	}
}
