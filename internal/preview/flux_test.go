package preview

import (
	"context"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
)

// A Flux target whose path has no kustomization file is built as Flux builds it (a
// kustomization generated over the directory, a subdirectory with its own built by
// kustomize), not read as plain YAML, which would take the subdirectory's
// kustomization and patch files for objects.
func TestAFluxTargetWithoutKustomizationIsBuiltAsFluxBuildsIt(t *testing.T) {
	drift := "targets:\n- {name: staging, path: clusters/staging, applier: flux}\n- {name: plain, path: clusters/staging}\n"
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{
		"drift.yaml":                              drift,
		"clusters/staging/cm.yaml":                cm("default", "top", "blue"),
		"clusters/staging/sub/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: patch.yaml\n",
		"clusters/staging/sub/cm.yaml":            cm("default", "sub", "blue"),
		"clusters/staging/sub/patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sub, namespace: default}\ndata: {color: green}\n",
	}, "head"); err != nil {
		t.Fatal(err)
	}
	targets, snaps := planned(t, r.Dir, drift, "HEAD")
	deps := Deps{Clusters: Live{Connect: connectLive(t, "default")}, Cache: &rendercache.Cache{}, Appliers: appliers.All()}
	p, err := Run(context.Background(), deps, Options{Concurrency: 4}, targets, snaps[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	for _, tg := range p.Targets {
		var names []string
		for _, o := range tg.Rendered.Objects {
			names = append(names, o.Get().GetName()+"="+o.Get().Object["data"].(map[string]any)["color"].(string))
		}
		switch tg.Name {
		case "staging":
			if tg.Spec.Renderer != render.RendererKustomize || strings.Join(names, ",") != "top=blue,sub=green" || len(tg.Rendered.Failures) != 0 ||
				len(tg.Rendered.Notes) != 1 || !strings.Contains(tg.Rendered.Notes[0], "built as Flux builds it") {
				t.Errorf("flux target: renderer %s, objects %v, failures %+v, notes %q", tg.Spec.Renderer, names, tg.Rendered.Failures, tg.Rendered.Notes)
			}
		case "plain":
			if tg.Spec.Renderer != render.RendererPlain || len(tg.Rendered.Failures) == 0 {
				t.Errorf("kubectl target: renderer %s, failures %+v: plain reading should trip on the kustomization file", tg.Spec.Renderer, tg.Rendered.Failures)
			}
		}
	}
}
