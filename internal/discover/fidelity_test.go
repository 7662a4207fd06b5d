package discover

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/render"
)

// helmTemplate renders a chart of the test repository with the Helm SDK's install
// action, client-only, as `helm template` and helm-controller render it, and returns
// the objects by kind/name.
func helmTemplate(t *testing.T, repoDir, chart, release, ns string, values map[string]any) map[string]string {
	t.Helper()
	ch, err := loader.Load("../../testdata/" + repoDir + "/" + chart)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(&action.Configuration{})
	in.DryRun, in.ClientOnly, in.Replace, in.IncludeCRDs = true, true, true, true
	in.ReleaseName, in.Namespace = release, ns
	in.KubeVersion = &chartutil.DefaultCapabilities.KubeVersion
	rel, err := in.Run(ch, values)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, doc := range strings.Split(rel.Manifest, "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || len(u.Object) == 0 {
			continue
		}
		b, _ := json.Marshal(u.Object)
		out[u.GetKind()+"/"+u.GetName()] = string(b)
	}
	return out
}

// objectsOf are a render's objects by kind/name.
func objectsOf(t *testing.T, res *render.Result) map[string]string {
	t.Helper()
	if len(res.Failures) > 0 {
		t.Fatalf("render failed: %v", res.Failures)
	}
	out := map[string]string{}
	for _, o := range res.Objects {
		b, _ := json.Marshal(o.Get().Object)
		out[o.Get().GetKind()+"/"+o.Get().GetName()] = string(b)
	}
	return out
}

func sameObjects(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: drift renders %d objects, the applier %d", what, len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s\ndrift:   %s\napplier: %s", what, k, got[k], w)
		}
	}
}

// A discovered HelmRelease renders what helm-controller renders: the chart with
// valuesFrom merged first and values over them, as the release helm-controller
// names, in its target namespace.
func TestADiscoveredHelmReleaseRendersAsHelmControllerDoes(t *testing.T) {
	res := discoverIn(t, "flux", staging)
	pod := byName(res)["HelmRelease/podinfo/podinfo"]
	got, err := render.Render(os.DirFS("../../testdata/flux"), pod.Specs[0])
	if err != nil {
		t.Fatal(err)
	}
	// What helm-controller composes: podinfo-values' values.yaml, then spec.values.
	values := map[string]any{"ui": map[string]any{"color": "#34577c"}, "replicaCount": 2} // spec.values wins over replicaCount: 5
	want := helmTemplate(t, "flux", "charts/podinfo", "podinfo", "podinfo", values)
	sameObjects(t, "HelmRelease podinfo", objectsOf(t, got), want)
	if !strings.Contains(want["ConfigMap/podinfo-settings"], `"replicas":"2"`) || !strings.Contains(want["ConfigMap/podinfo-settings"], "#34577c") {
		t.Errorf("the values did not reach the chart: %s", want["ConfigMap/podinfo-settings"])
	}
}

// A discovered Argo CD Helm source renders what helm template renders with the
// Application's value files, values and parameters.
func TestADiscoveredArgoCDHelmSourceRendersAsHelmTemplateDoes(t *testing.T) {
	res := discoverIn(t, "argocd", argoRepo)
	app := byName(res)["Application/helm-guestbook"]
	got, err := render.Render(os.DirFS("../../testdata/argocd"), app.Specs[0])
	if err != nil {
		t.Fatal(err)
	}
	// helm template guestbook-web helm-guestbook -n helm-guestbook
	//   -f values-production.yaml -f <values> --set-string image.tag=0.2
	values := map[string]any{"replicaCount": 3, "service": map[string]any{"port": 8080}, "image": map[string]any{"tag": "0.2"}}
	want := helmTemplate(t, "argocd", "helm-guestbook", "guestbook-web", "helm-guestbook", values)
	sameObjects(t, "Application helm-guestbook", objectsOf(t, got), want)
	if !strings.Contains(want["ConfigMap/guestbook-web"], `"replicas":"3"`) || !strings.Contains(want["ConfigMap/guestbook-web"], `ks-guestbook-demo:0.2`) {
		t.Errorf("the values did not reach the chart: %s", want["ConfigMap/guestbook-web"])
	}
}
