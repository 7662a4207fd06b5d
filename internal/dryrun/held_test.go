package dryrun

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/worker"
)

// TestPlanningReadsNoObjectItNeedNot: objects the render worker sent are held as
// their JSON until read. Planning them (identities, namespaces, duplicates, the
// base64 check), finding what the change creates and the inventories read only the
// objects that hold what they look for; sending decodes each object as it goes. A
// run so never holds a large rendering decoded all at once.
func TestPlanningReadsNoObjectItNeedNot(t *testing.T) {
	c, err := kube.NewClients(testEnv(t).Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	var built []render.Object
	for i := range 20 {
		built = append(built, render.Object{Obj: configMap(fmt.Sprintf("held-%d", i), "v"), Source: "cm.yaml", Doc: i + 1})
	}
	badBinary := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "held-binary", "namespace": "default"},
		"binaryData": map[string]any{"blob": "not base64"}}}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "held-ns"}}}
	built = append(built,
		render.Object{Obj: badBinary, Source: "binary.yaml", Doc: 1},
		render.Object{Obj: ns, Source: "ns.yaml", Doc: 1},
		render.Object{Obj: secret("held-secret", map[string]any{"k": "dg=="}), Source: "secret.yaml", Doc: 1})
	objs := make([]render.Object, len(built))
	for i, o := range built {
		if objs[i], err = worker.Hold(o); err != nil {
			t.Fatal(err)
		}
	}
	// What looks for a field decodes what holds it: the ConfigMap with binaryData
	// and the Secret (their bytes are checked), nothing else.
	mustRead := map[string]bool{"held-binary": true, "held-secret": true}

	opts := Options{Applier: kubectlssa.New(), FieldManager: "drift-test", RequestTimeout: 10 * time.Second}
	pending := PendingFrom(objs)
	if !pending.Namespaces["held-ns"] {
		t.Errorf("the Namespace the change creates was not found: %v", pending.Namespaces)
	}
	if invs, fails := inventory.Find(objs); len(invs) != 0 || len(fails) != 0 {
		t.Errorf("inventories %v, failures %v; want none", invs, fails)
	}
	opts.Pending = pending
	results := Plan(c, objs, opts)
	for i, o := range objs {
		if got, want := o.Decoded(), mustRead[o.Name()]; got != want {
			t.Errorf("%s: decoded %v after planning, want %v", o.Where(), got, want)
		}
		if results[i].ID.Name != built[i].Get().GetName() || results[i].ID.Kind != built[i].Get().GetKind() {
			t.Errorf("%s: planned as %s", o.Where(), results[i].ID.Display())
		}
	}
	wantReason(t, results[20], reason.Invalid, "binaryData.blob is not valid base64")

	Send(context.Background(), c, results, opts)
	for i, r := range results {
		if i == 20 {
			continue // never sent
		}
		if r.Err != nil || r.Merged == nil {
			t.Errorf("%s: %+v, want a prediction", r.ID.Display(), r.Err)
		}
		if !objs[i].Decoded() {
			t.Errorf("%s was sent but never decoded", objs[i].Where())
		}
	}
}
