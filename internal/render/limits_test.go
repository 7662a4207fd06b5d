package render

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/reason"
)

func configMaps(n int) []Object {
	objs := make([]Object, n)
	for i := range objs {
		objs[i] = Object{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i)}}}}
	}
	return objs
}

func TestObjectCapDropsEveryObjectOfATargetOverItAndNamesTheTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		spec        Spec
		objects     int
		max         int
		wantObjects int
		wantSource  string
		wantName    string
	}{
		{name: "at the limit", spec: Spec{Path: "apps", Renderer: RendererPlain}, objects: 3, max: 3, wantObjects: 3},
		{name: "over, plain", spec: Spec{Path: "apps", Renderer: RendererPlain}, objects: 4, max: 3, wantSource: "apps", wantName: "path apps renders 4 objects, over the limit of 3"},
		{name: "over, helm", spec: Spec{Path: "charts/web/", Renderer: RendererHelm}, objects: 5, max: 1, wantSource: "charts/web/Chart.yaml", wantName: "helm chart charts/web renders 5 objects"},
		{name: "over, kustomize at the root", spec: Spec{Path: "", Renderer: RendererKustomize}, objects: 2, max: 1, wantSource: ".", wantName: "kustomization the repository root renders 2 objects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := &Result{Objects: configMaps(tc.objects)}
			capObjects(res, tc.spec, tc.max)
			if len(res.Objects) != tc.wantObjects {
				t.Errorf("objects = %d, want %d", len(res.Objects), tc.wantObjects)
			}
			if tc.wantName == "" {
				if len(res.Failures) != 0 {
					t.Errorf("failures = %v, want none", res.Failures)
				}
				return
			}
			if len(res.Failures) != 1 {
				t.Fatalf("failures = %v, want one", res.Failures)
			}
			f := res.Failures[0]
			if f.Reason != reason.TooLarge || f.Source != tc.wantSource || !strings.Contains(f.Message, tc.wantName) || !strings.Contains(f.Message, "--render-max-objects") {
				t.Errorf("failure = %+v, want too-large at %s saying %q and the flag", f, tc.wantSource, tc.wantName)
			}
		})
	}
}

// TestHelmOutputOverTheLimitIsOneFailureNamingTheLargestTemplate: the chart's output is
// counted before a single document is parsed, and the failure points at the template
// that wrote the most.
func TestHelmOutputOverTheLimitIsOneFailureNamingTheLargestTemplate(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"big/Chart.yaml":           {Data: []byte("apiVersion: v2\nname: big\nversion: 0.1.0\n")},
		"big/templates/small.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: small}\n")},
		"big/templates/huge.yaml": {Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: huge}
data:
  x: {{ repeat 3000 "x" | quote }}
`)},
	}
	limits := DefaultLimits()
	limits.OutputBytes = 2000
	res := helm(fsys, "big", HelmOptions{ReleaseName: "big"}, limits, nil)
	if len(res.Objects) != 0 || len(res.Failures) != 1 {
		t.Fatalf("objects %d, failures %v: want no objects and one failure", len(res.Objects), res.Failures)
	}
	f := res.Failures[0]
	if f.Reason != reason.TooLarge || f.Source != "big/templates/huge.yaml" || !strings.Contains(f.Message, "chart big (big)") ||
		!strings.Contains(f.Message, "over the 2.0 KiB limit") || !strings.Contains(f.Message, "--render-max-output") {
		t.Errorf("failure = %+v", f)
	}
	if strings.Contains(f.Message, "xxx") {
		t.Errorf("failure quotes the output: %s", f.Message)
	}

	limits.OutputBytes = 1 << 20
	if res := helm(fsys, "big", HelmOptions{ReleaseName: "big"}, limits, nil); len(res.Objects) != 2 || len(res.Failures) != 0 {
		t.Errorf("under the limit: objects %d, failures %v", len(res.Objects), res.Failures)
	}
}
