package render

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/reason"
)

// TestAResponseCrossesTheWireWhole: every part of a result (objects with their place
// and notes, failures, notes, inputs) comes back as it was sent, numbers with the
// types a rendering holds.
func TestAResponseCrossesTheWireWhole(t *testing.T) {
	t.Parallel()
	res := &Result{
		Objects: []Object{
			{Obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "ünïcode", "labels": map[string]any{"a": "<b>&"}},
				"data": map[string]any{"k": "line\nbreak \u2028"}, "n": int64(9007199254740993), "f": 1.5, "big": 1e300, "nul": nil,
				"list": []any{true, false, int64(-3), "x"}}}, Source: "apps/a.yaml", Doc: 2},
			{Obj: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "hook"}}},
				Source: "charts/web/templates/job.yaml", Doc: 1, Item: 3, Notes: []Note{{Reason: reason.HelmHook, Message: "a pre-install hook"}}},
		},
		Failures: []Failure{{Source: "apps/b.yaml", Doc: 1, Reason: reason.Malformed, Message: "malformed YAML"}},
		Notes:    []string{"a note"},
		Inputs:   Inputs{Trees: []string{"apps"}},
	}
	data, err := encodeResponse(workResponse{Result: res})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeResponse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Result, res) {
		t.Errorf("got %#v\nwant %#v", got.Result, res)
	}
	if len(res.Objects) != 2 {
		t.Errorf("the result sent was modified: %d objects", len(res.Objects))
	}
	for _, resp := range []workResponse{{Err: "cannot render"}, {Result: &Result{Failures: res.Failures}}} {
		data, err := encodeResponse(resp)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := decodeResponse(data); err != nil || !reflect.DeepEqual(got, resp) {
			t.Errorf("got %#v, %v; want %#v", got, err, resp)
		}
	}
}

// TestACutResponseIsAnError: an answer that ends early or runs on past its objects
// (a worker that died while writing) is an error, never fewer objects.
func TestACutResponseIsAnError(t *testing.T) {
	t.Parallel()
	data, err := encodeResponse(workResponse{Result: &Result{Objects: configMaps(3)}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) {
		if got, err := decodeResponse(data[:n]); err == nil {
			t.Fatalf("the first %d of %d bytes decode to %+v without an error", n, len(data), got.Result)
		}
	}
	if _, err := decodeResponse(append(data[:len(data):len(data)], 0)); err == nil {
		t.Errorf("a byte past the objects decodes without an error")
	}
}
