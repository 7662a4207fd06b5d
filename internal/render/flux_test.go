package render

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Flux Kustomization's path without a kustomization file, laid out as
// flux2-kustomize-helm-example's clusters/staging, and one whose kustomization reads
// a file above it: drift's build equals Flux's own (fluxcd/pkg/kustomize: its
// generator, then its build, without load restrictions), object by object; plain
// reading would have taken flux-system's kustomization.yaml for an object.
func TestADirectoryIsBuiltAsFluxBuildsIt(t *testing.T) {
	ks := func(name, path string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: " + path + "\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n"
	}
	files := map[string]string{
		"clusters/staging/apps.yaml":                      ks("apps", "./apps/staging"),
		"clusters/staging/infrastructure.yaml":            ks("infra-controllers", "./infrastructure/controllers") + "---\n" + ks("infra-configs", "./infrastructure/configs"),
		"clusters/staging/flux-system/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [gotk-sync.yaml]\npatches:\n- target: {kind: GitRepository}\n  patch: '[{\"op\": \"add\", \"path\": \"/spec/interval\", \"value\": \"5m\"}]'\n",
		"clusters/staging/flux-system/gotk-sync.yaml":     "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {interval: 1m, url: https://example.com/repo, ref: {branch: main}}\n",
		"clusters/staging/extra/nested/cm.yml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: default}\ndata: {a: \"1\"}\n",
		"clusters/staging/README.md":                      "# staging\n",
		"clusters/staging/values.json":                    "{\"not\": \"read\"}\n",
		"clusters/empty/.keep":                            "",
		"apps/staging/kustomization.yaml":                 "resources: [../common/cm.yaml]\nnamePrefix: staging-\n",
		"apps/common/cm.yaml":                             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: common, namespace: default}\n",
	}
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys := os.DirFS(root)
	for _, dir := range []string{"clusters/staging", "clusters/empty", "apps/staging"} {
		got := KustomizeAsFlux(fsys, dir)
		if len(got.Failures) > 0 {
			t.Fatalf("%s: %+v", dir, got.Failures)
		}
		if generated := dir != "apps/staging"; generated != (len(got.Notes) == 1 && strings.Contains(got.Notes[0], "built as Flux builds it")) {
			t.Errorf("%s: notes %q", dir, got.Notes)
		}

		// Flux, on a copy (its generator writes the kustomization file in place).
		work := t.TempDir()
		if err := os.CopyFS(work, fsys); err != nil {
			t.Fatal(err)
		}
		gen := fluxkustomize.NewGenerator(work, unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"path": dir}}})
		if _, err := gen.WriteFile(filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
		m, err := fluxkustomize.SecureBuild(work, filepath.Join(work, dir), false)
		if err != nil {
			t.Fatal(err)
		}
		var want []map[string]any
		for _, r := range m.Resources() {
			obj, err := r.Map()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, obj)
		}
		var have []map[string]any
		for _, o := range got.Objects {
			have = append(have, o.Get().Object)
		}
		if !reflect.DeepEqual(have, want) {
			t.Errorf("%s: drift built\n%v\nFlux built\n%v", dir, have, want)
		}
	}
	if n := len(KustomizeAsFlux(fsys, "clusters/staging").Objects); n != 5 {
		t.Errorf("%d objects, want 5: three Kustomizations, the GitRepository, the ConfigMap", n)
	}
	// kustomize build's own restrictions refuse the file above the kustomization, which
	// Flux reads.
	if res := Kustomize(fsys, "apps/staging"); len(res.Failures) == 0 {
		t.Errorf("kustomize build with its default restrictions read ../common/cm.yaml: %v", res.Objects)
	}
}
