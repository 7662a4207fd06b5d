package preview

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/sopsdoc"
)

// ksopsSources reads KSOPS generators, nested kustomizations' too, as their files
// built as resources; another generator stays; secretFrom, which drift does not read,
// is a failure naming the generator, never dropped quietly.
func TestKSOPSGeneratorsBecomeResources(t *testing.T) {
	ksops := func(body string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata: {name: s}\n" + body)}
	}
	fsys := fstest.MapFS{
		"overlay/kustomization.yaml": {Data: []byte("resources: [../base]\ngenerators: [gen.yaml, other.yaml]\n")},
		"overlay/gen.yaml":           ksops("files: [./a.enc.yaml]\n"),
		"overlay/other.yaml":         {Data: []byte("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: c}\nliterals: [k=v]\n")},
		"base/kustomization.yaml":    {Data: []byte("generators: [from.yaml]\n")},
		"base/from.yaml":             ksops("secretFrom: [{metadata: {name: x}, files: [b.enc]}]\n"),
	}
	spec := render.Spec{Path: "overlay", Renderer: render.RendererKustomize}
	notes, failures := ksopsSources(fsys, &spec)
	if spec.Decrypt != sopsdoc.Provider || spec.Overlaid == "" {
		t.Errorf("spec: decrypt %q, overlaid %q", spec.Decrypt, spec.Overlaid)
	}
	if got := spec.Overlay["overlay/kustomization.yaml"]; !strings.Contains(got, "- ./a.enc.yaml") || !strings.Contains(got, "generators:\n- other.yaml") || !strings.Contains(got, "- ../base") {
		t.Errorf("overlay/kustomization.yaml:\n%s", got)
	}
	if got := spec.Overlay["base/kustomization.yaml"]; strings.Contains(got, "generators") {
		t.Errorf("base/kustomization.yaml keeps the generator:\n%s", got)
	}
	if len(notes) != 2 || !strings.Contains(notes[0]+notes[1], "KSOPS generator overlay/gen.yaml") {
		t.Errorf("notes: %v", notes)
	}
	if len(failures) != 1 || failures[0].Source != "base/from.yaml" || !strings.Contains(failures[0].Message, "secretFrom") {
		t.Errorf("failures: %+v", failures)
	}
}
