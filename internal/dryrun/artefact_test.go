package dryrun

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"

	"github.com/drift-gitops/drift/internal/render"
)

// An object kubectl apply created carries a last-applied-configuration annotation; a
// server-side apply copies the applied body into it. Nothing drift sends only to pin
// the version may show there, or in any other part of the prediction.
func TestPredictionHasNoPinnedResourceVersion(t *testing.T) {
	direct := dynamic.NewForConfigOrDie(testEnv(t).Config)
	live := configMap("artefact", "v1")
	live.SetAnnotations(map[string]string{applier.LastAppliedAnnotation: `{"apiVersion":"v1","data":{"value":"v1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"artefact","namespace":"default"}}` + "\n"})
	if _, err := direct.Resource(cmGVR).Namespace("default").Create(context.Background(), live, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	clients, err := kube.NewClients(testEnv(t).Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), clients, []render.Object{{Obj: configMap("artefact", "v2"), Source: "cm.yaml", Doc: 1}}, Options{Applier: kubectlssa.New()})[0]
	if r.Err != nil {
		t.Fatalf("unexpected error: %+v", r.Err)
	}
	got := r.Merged.GetAnnotations()[applier.LastAppliedAnnotation]
	if strings.Contains(got, "resourceVersion") {
		t.Fatalf("the predicted last-applied-configuration carries drift's pinned resourceVersion: %s", got)
	}
	if r.Merged.GetResourceVersion() != r.Live.GetResourceVersion() {
		t.Fatalf("dry-run answer resourceVersion %s, live %s: want the stored version kept", r.Merged.GetResourceVersion(), r.Live.GetResourceVersion())
	}
}
