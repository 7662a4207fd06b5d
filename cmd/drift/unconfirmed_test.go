package main

import (
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// TestAChangeUnderASkippedKustomizationIsNotPreviewed: Kustomizations whose source
// is neither in the repository nor given (fluxSources), or an OCIRepository that
// may be built from it, and a HelmRelease whose chart's GitRepository is found
// nowhere, are skipped; a change to a file under their path (the chart's) reads as
// not previewed (incomplete, exit 2), never as no change. A change elsewhere is
// still no change.
func TestAChangeUnderASkippedKustomizationIsNotPreviewed(t *testing.T) {
	ks := func(name, path, source string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec: {interval: 10m, path: " + path + ", prune: true, sourceRef: " + source + "}\n"
	}
	base := map[string]string{
		"clusters/prod/policies.yaml": ks("policies", "./policies", "{kind: GitRepository, name: policies}"),
		"clusters/prod/infra.yaml":    ks("infra", "./infra", "{kind: OCIRepository, name: infra}"),
		"policies/deny.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deny, namespace: default}\ndata: {rule: a}\n",
		"infra/controller.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: controller, namespace: default}\ndata: {tag: v1}\n",
		"README.md":                   "# fleet\n",
		"clusters/prod/web.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: flux-system}\n" +
			"spec: {interval: 10m, chart: {spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: charts}}}}\n",
		"charts/web/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
	}
	for name, change := range map[string]map[string]string{
		"policies": {"policies/deny.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deny, namespace: default}\ndata: {rule: b}\n"},
		"web":      {"charts/web/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: c}\n"},
		"infra":    {"infra/controller.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: controller, namespace: default}\ndata: {tag: v2}\n"},
	} {
		dir, baseSHA := actionsCheckout(t, base, change)
		rep, o := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", "HEAD")
		kind := "Kustomization"
		if name == "web" {
			kind = "HelmRelease"
		}
		tg := targetNamed(rep, kind+"/flux-system/"+name)
		if o.code != exitError || rep.Complete || tg == nil || tg.Skipped == "" || !tg.NotPreviewed {
			t.Errorf("a change under %s: exit %d, complete %v, target %+v\n%s", name, o.code, rep.Complete, tg, o.stderr)
		}
		// The changed file is named, not previewed, with the target and why.
		for path := range change {
			f := coveredFile(rep, path)
			if f == nil || f.Status != report.CoverageNotPreviewed || len(f.Targets) != 1 || f.Targets[0].Name != kind+"/flux-system/"+name || f.Targets[0].Why != tg.Skipped {
				t.Errorf("a change under %s: the coverage of %s is %+v", name, path, f)
			}
		}
	}
	dir, baseSHA := actionsCheckout(t, base, map[string]string{"README.md": "# the fleet\n"})
	rep, o := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", "HEAD")
	if o.code != 0 || !rep.Complete {
		t.Errorf("a documentation change: exit %d, complete %v\n%s", o.code, rep.Complete, o.stderr)
	}
}
