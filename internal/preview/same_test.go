package preview

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// A Service is held on a throwaway server when it names an address or port the
// server allocates once: read the same held as JSON (as a render worker sends it)
// and decoded.
func TestAServiceNamesAnAllocationWhenItAsksForOne(t *testing.T) {
	for spec, want := range map[string]bool{
		`{"ports":[{"port":80}]}`:                                                             false,
		`{"type":"NodePort","ports":[{"port":80}]}`:                                           false,
		`{"clusterIP":"None","ports":[{"port":80}]}`:                                          false,
		`{"clusterIP":"","clusterIPs":["None"]}`:                                              false,
		`{"type":"NodePort","ports":[{"port":80,"nodePort":0}]}`:                              false,
		`{"type":"NodePort","ports":[{"port":80},{"port":81,"nodePort":30081}]}`:              true,
		`{"clusterIP":"10.0.0.12"}`:                                                           true,
		`{"clusterIPs":["10.0.0.12","fd00::12"]}`:                                             true,
		`{"type":"LoadBalancer","externalTrafficPolicy":"Local","healthCheckNodePort":32000}`: true,
	} {
		js := []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":` + spec + `}`)
		m := map[string]any{}
		if err := utiljson.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		canonical, _ := json.Marshal(m)
		for _, o := range []render.Object{{Obj: u}, render.FromJSON(canonical, object.IDOf(u), "s")} {
			if got := namesAllocation(o); got != want {
				t.Errorf("spec %s (decoded %v): namesAllocation = %v, want %v", spec, o.Decoded(), got, want)
			}
		}
	}
}
