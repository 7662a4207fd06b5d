package main

import (
	"strings"
	"testing"
)

// TestAnObjectWithoutNamespaceIsRefusedAsFluxRefusesIt: kustomize-controller defaults
// no namespace. A ConfigMap without metadata.namespace in a Kustomization without
// targetNamespace is refused as Flux's server-side apply refuses it ("namespace not
// specified", fluxcd/pkg/ssa), never previewed in "default"; the same object under a
// Kustomization with targetNamespace is previewed there. A HelmRelease without a
// namespace is refused as a target, named without the empty namespace.
func TestAnObjectWithoutNamespaceIsRefusedAsFluxRefusesIt(t *testing.T) {
	ks := func(name, path, extra string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec: {interval: 10m, path: " + path + ", prune: true, sourceRef: {kind: GitRepository, name: flux-system}" + extra + "}\n"
	}
	files := map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n" +
			"spec: {interval: 1m, url: 'https://git.example/fleet', ref: {branch: main}}\n---\n" + ks("flux-system", "./clusters/prod", ""),
		"clusters/prod/bare.yaml":     ks("bare", "./apps/bare", ""),
		"clusters/prod/targeted.yaml": ks("targeted", "./apps/targeted", ", targetNamespace: default"),
		"apps/bare/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: no-namespace-bare}\ndata: {a: b}\n",
		"apps/targeted/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: no-namespace-targeted}\ndata: {a: b}\n",
		"apps/targeted/hr.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: in-target}\n" +
			"spec: {interval: 1m, chart: {spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}}}\n",
		"clusters/prod/web.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web}\n" +
			"spec: {interval: 1m, chart: {spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}}}\n",
		"charts/web/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-chart}\ndata: {a: b}\n",
	}
	dir, _ := actionsCheckout(t, files, map[string]string{"README.md": "# fleet\n"})
	rep, o := driftJSON(t, "diff", "--repo", dir, "--ref", "HEAD", "--target", "Kustomization/flux-system/bare", "--target", "Kustomization/flux-system/targeted", "--target", "HelmRelease/*")
	bare := targetNamed(rep, "Kustomization/flux-system/bare")
	if o.code != exitError || bare == nil || len(bare.Objects) != 1 || bare.Objects[0].ErrorReason != "invalid" ||
		!strings.Contains(bare.Objects[0].Error, "namespace not specified") {
		t.Fatalf("a ConfigMap without namespace under a Kustomization without targetNamespace: exit %d, %+v\n%s", o.code, bare, o.stderr)
	}
	targeted := targetNamed(rep, "Kustomization/flux-system/targeted")
	if targeted == nil || len(targeted.Objects) != 2 {
		t.Fatalf("targeted: %+v", targeted)
	}
	for _, obj := range targeted.Objects {
		if obj.Kind == "ConfigMap" && (obj.Category == "error" || obj.Namespace != "default") || obj.Kind == "HelmRelease" && obj.Namespace != "default" {
			t.Errorf("under targetNamespace: %s %s/%s %s %s", obj.Kind, obj.Namespace, obj.Name, obj.Category, obj.Error)
		}
	}
	web := targetNamed(rep, "HelmRelease/web")
	if web == nil || len(web.Objects) != 1 || web.Objects[0].ErrorReason != "invalid" || !strings.Contains(web.Objects[0].Error, "has no metadata.namespace") {
		t.Errorf("a HelmRelease without namespace: %+v (targets %v)", web, targetNames(rep))
	}
	if targetNamed(rep, "HelmRelease/default/in-target") == nil {
		t.Errorf("a HelmRelease under targetNamespace is in it: targets %v", targetNames(rep))
	}
}
