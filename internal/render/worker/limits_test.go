package worker

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// TestEncodedOutputOverTheLimitSendsTheFailuresWithoutTheObjects: what a worker sends
// back is bounded whatever renders it (plain, kustomize), and what it keeps (inputs,
// earlier failures) still reaches drift.
func TestEncodedOutputOverTheLimitSendsTheFailuresWithoutTheObjects(t *testing.T) {
	t.Parallel()
	spec := render.Spec{Path: "apps", Renderer: render.RendererPlain}
	earlier := render.Failure{Source: "apps/x.yaml", Doc: 1, Reason: reason.Malformed, Message: "malformed YAML"}
	resp := WorkResponse{Result: &render.Result{Objects: configMaps(100), Failures: []render.Failure{earlier}, Inputs: render.Inputs{Trees: []string{"apps"}}}}
	full, err := EncodeResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		max     int64
		objects int
	}{
		{name: "under", max: int64(len(full)), objects: 100},
		{name: "over", max: int64(len(full)) - 1, objects: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data, err := encodeLimited(resp, spec, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeResponse(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Result.Objects) != tc.objects || got.Result.Inputs.Trees[0] != "apps" || got.Result.Failures[0] != earlier {
				t.Errorf("objects %d (want %d), inputs %v, failures %v", len(got.Result.Objects), tc.objects, got.Result.Inputs, got.Result.Failures)
			}
			if tc.objects == 0 {
				last := got.Result.Failures[len(got.Result.Failures)-1]
				if last.Reason != reason.TooLarge || !strings.Contains(last.Message, "path apps renders 100 objects") {
					t.Errorf("failure = %+v", last)
				}
			}
			if len(resp.Result.Objects) != 100 || len(resp.Result.Failures) != 1 {
				t.Errorf("the result given was modified")
			}
		})
	}
}

// configMaps are n ConfigMaps, cm-0 to cm-(n-1), as a renderer makes them.
func configMaps(n int) []render.Object {
	objs := make([]render.Object, n)
	for i := range objs {
		objs[i] = render.Object{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i)}}}}
	}
	return objs
}
