package entry

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/inventory"
)

// TestThrowawayServersMadeUpValuesAreMarked: what a throwaway server makes up anew on
// every run (the times of a CRD's conditions, the uid of the inventory that marks an
// object as its own) reads "(generated)", so that two runs give the same report; what
// the manifest says stays.
func TestThrowawayServersMadeUpValuesAreMarked(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "b", "annotations": map[string]any{inventory.ApplyOwnerAnnotation: "417ded7a", "team": "shop"}},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Established", "status": "True", "lastTransitionTime": "2026-11-28T16:24:36Z"},
			map[string]any{"type": "NamesAccepted", "status": "True"},
		}},
	}}
	markConditionTimes(u)
	markOwnerUID(u)
	if got := u.GetAnnotations(); got[inventory.ApplyOwnerAnnotation] != generatedValue || got["team"] != "shop" {
		t.Errorf("annotations %v, want the owner's uid generated and the rest kept", got)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if got := conds[0].(map[string]any)["lastTransitionTime"]; got != generatedValue {
		t.Errorf("Established's time: %v, want %s", got, generatedValue)
	}
	if _, ok := conds[1].(map[string]any)["lastTransitionTime"]; ok {
		t.Errorf("a condition without a time got one: %v", conds[1])
	}
	markConditionTimes(nil)
	markOwnerUID(nil)
}
