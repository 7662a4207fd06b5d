package entry

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
)

func splitObj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSplitMarksBothPredictionsOfANewServiceAndNamesChangesDiffedAgainstLive(t *testing.T) {
	t.Parallel()
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n"
	predicted := func(ip string) *unstructured.Unstructured {
		return splitObj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop, uid: "+ip+"}\nspec: {clusterIP: "+ip+", ports: [{port: 80}]}\n")
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n"
	newSvc := dryrun.Result{Object: render.Object{Obj: splitObj(t, svc)}, ID: object.IDOf(splitObj(t, svc)), Merged: predicted("10.0.0.9")}
	baseSvc := dryrun.Result{Object: render.Object{Obj: splitObj(t, svc)}, ID: newSvc.ID, Merged: predicted("10.0.0.44")}
	adopted := dryrun.Result{Object: render.Object{Obj: splitObj(t, cm)}, ID: object.IDOf(splitObj(t, cm)), Live: splitObj(t, cm), Merged: splitObj(t, cm)}
	change, sd, drift := stories(Split{Head: newSvc, Base: &baseSvc})
	for side, u := range map[string]*unstructured.Unstructured{"base": change.Live, "head": change.Merged} {
		if ip, _, _ := unstructured.NestedString(u.Object, "spec", "clusterIP"); ip != "(allocated)" {
			t.Errorf("%s prediction's clusterIP = %q, want (allocated)", side, ip)
		}
	}
	if sd != report.SidesChange || drift == nil {
		t.Errorf("a new Service in both: sides %v, drift %v; want base/head and a drift story", sd, drift)
	}
	if _, sd, drift := stories(Split{Head: adopted}); sd != report.SidesChangeLive || drift != nil {
		t.Errorf("an object only the head renders, live already: sides %v, drift %v; want live/head and no drift story", sd, drift)
	}
}
