package ephemeral

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/testenv"
)

// TestACustomResourceSeedsRightAfterItsCRD: a CRD and its custom resources seeded in
// one call, as the base's controllers' CRDs and HelmReleases are, always load: the
// objects wait until the server's discovery lists the new kind (an established CRD
// may be a moment from it), for CRD after CRD.
func TestACustomResourceSeedsRightAfterItsCRD(t *testing.T) {
	testenv.Require(t)
	srv, err := Start(context.Background(), os.Getenv("KUBEBUILDER_ASSETS"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	clients, err := kube.NewClients(srv.Config, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		group := fmt.Sprintf("g%d.example.com", i)
		crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%s}
spec:
  group: %s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group, group)
		cr := fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {size: %d}\n", group, i)
		var objs []render.Object
		for _, doc := range []string{crd, cr} {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatal(err)
			}
			objs = append(objs, render.Object{Obj: u})
		}
		if failed := Seed(context.Background(), clients, objs, dryrun.Options{Applier: kubectlssa.New(), Concurrency: 8}); len(failed) > 0 {
			t.Fatalf("CRD %d: %s", i, failed[0].Err.Message)
		}
	}
}
