package rendercache

import (
	"testing"
	"testing/fstest"

	"github.com/drift-gitops/drift/internal/render"
)

func TestCacheRendersEachSnapshotAndSpecOnce(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, env := range []string{"prod", "staging"} {
		fsys["shop/"+env+"/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources: [cm.yaml]\n")}
		fsys["shop/"+env+"/cm.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + env + "}\n")}
	}
	var c Cache
	spec := render.Spec{Path: "shop/prod", Renderer: render.RendererKustomize}
	a, err := c.Render("commit-1", fsys, spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Render("commit-1", fsys, spec)
	other, _ := c.Render("commit-2", fsys, spec)
	staging, _ := c.Render("commit-1", fsys, render.Spec{Path: "shop/staging", Renderer: render.RendererKustomize})
	if a != b || a == other || a == staging || len(a.Objects) != 1 || c.Made() != 3 {
		t.Errorf("cache: same key gave a new result, or different keys shared one (%d renderings made, want 3)", c.Made())
	}
}
