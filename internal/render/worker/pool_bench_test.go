package worker

import (
	"context"
	"path"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// BenchmarkRenderWorker measures what a render worker costs per target (starting
// drift again, opening the repository, encoding and decoding the result) against
// rendering in process, on testdata/platform's targets and the demo repository.
func BenchmarkRenderWorker(b *testing.B) {
	for _, repo := range []struct {
		name, dir string
		specs     []render.Spec
	}{
		{name: "platform", dir: "../../../testdata/platform", specs: []render.Spec{
			{Path: "platform", Renderer: render.RendererPlain},
			{Path: "apps/shop/overlays/prod", Renderer: render.RendererKustomize},
			{Path: "apps/shop/overlays/staging", Renderer: render.RendererKustomize},
			{Path: "charts/web", Renderer: render.RendererHelm, Helm: webOptions},
		}},
		{name: "demo", dir: "../../../testdata/demo/head", specs: []render.Spec{{Path: "", Renderer: render.RendererPlain}}},
	} {
		r, err := gitfixture.Init(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		commit, err := r.CommitTree(repo.dir, "bench")
		if err != nil {
			b.Fatal(err)
		}
		src, err := source.Open(r.Dir)
		if err != nil {
			b.Fatal(err)
		}
		snap, err := src.Snapshot(commit)
		if err != nil {
			b.Fatal(err)
		}
		iso := New(context.Background(), r.Dir, render.DefaultLimits())
		for _, spec := range repo.specs {
			name := repo.name + "/" + spec.Renderer + "/" + path.Clean("/"+spec.Path)
			b.Run(name+"/in-process", func(b *testing.B) {
				for b.Loop() {
					if _, err := render.Render(snap.FS, spec); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/worker", func(b *testing.B) {
				for b.Loop() {
					if _, err := iso.Render(commit, spec, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
