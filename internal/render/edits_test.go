package render

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"github.com/fluxcd/pkg/sourceignore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"
)

// writeTree writes files (slash paths) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
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
	return root
}

// A Flux Kustomization's spec (targetNamespace, namePrefix, patches of both kinds,
// images, components) and postBuild substitution (defaults, escapes, a quoted number,
// a resource that turns substitution off): drift's build equals kustomize-controller's
// (fluxcd/pkg/kustomize: its generator writing the spec into the kustomization, its
// build, then SubstituteVariables on each resource), object by object, with a
// kustomization of the directory's own and with a generated one.
func TestAKustomizationSpecIsBuiltAsFluxBuildsIt(t *testing.T) {
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: 'nginx:1.25'}]}\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata:\n  env: ${cluster_env}\n  owner: ${owner:=platform}\n" +
		"  literal: $${not_a_var}\n  port: \"${port}\"\n  bare: ${port}\n"
	off := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: raw\n  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata: {keep: '${cluster_env}'}\n"
	root := writeTree(t, map[string]string{
		"own/kustomization.yaml": "resources: [deploy.yaml, cm.yaml, raw.yaml]\nimages:\n- {name: nginx, newName: old/nginx, newTag: '1.26'}\n",
		"own/deploy.yaml":        deploy,
		"own/cm.yaml":            cm,
		"own/raw.yaml":           off,
		"generated/deploy.yaml":  deploy,
		"generated/cm.yaml":      cm,
		"components/extra/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" +
			"patches:\n- target: {kind: ConfigMap, name: settings}\n  patch: '[{\"op\": \"add\", \"path\": \"/data/component\", \"value\": \"yes\"}]'\n",
	})
	spec := map[string]any{
		"targetNamespace": "team", "namePrefix": "staging-", "nameSuffix": "-v1",
		"images":     []any{map[string]any{"name": "nginx", "newTag": "1.27"}},
		"components": []any{"../components/extra"},
		"patches": []any{
			map[string]any{"patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n"},
			map[string]any{"target": map[string]any{"kind": "ConfigMap", "name": "settings"}, "patch": `[{"op": "add", "path": "/data/patched", "value": "${cluster_env}"}]`},
		},
		"postBuild": map[string]any{"substitute": map[string]any{"cluster_env": "staging", "port": "8080"}},
	}
	opts := &KustomizeOptions{Namespace: "team", NamePrefix: "staging-", NameSuffix: "-v1",
		Images: []kustypes.Image{{Name: "nginx", NewTag: "1.27"}}, MergeImages: true,
		Components: []string{"../components/extra"},
		Patches: []kustypes.Patch{
			{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n"},
			{Target: &kustypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: "ConfigMap"}, Name: "settings"}}, Patch: `[{"op": "add", "path": "/data/patched", "value": "${cluster_env}"}]`},
		}}
	vars := map[string]string{"cluster_env": "staging", "port": "8080"}
	fsys := os.DirFS(root)
	for _, dir := range []string{"own", "generated"} {
		spec["path"] = dir
		got := kustomizeSpec(fsys, Spec{Path: dir, Renderer: RendererKustomize, AsFlux: true, Kustomize: opts, Substitute: vars})
		if len(got.Failures) > 0 {
			t.Fatalf("%s: %+v", dir, got.Failures)
		}
		work := t.TempDir()
		if err := os.CopyFS(work, fsys); err != nil {
			t.Fatal(err)
		}
		ks := unstructured.Unstructured{Object: map[string]any{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": "apps", "namespace": "flux-system"}, "spec": spec}}
		if _, err := fluxkustomize.NewGenerator(work, ks).WriteFile(filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
		m, err := fluxkustomize.SecureBuild(work, filepath.Join(work, dir), false)
		if err != nil {
			t.Fatal(err)
		}
		var want []map[string]any
		for _, r := range m.Resources() {
			sr, err := fluxkustomize.SubstituteVariables(context.Background(), nil, ks, r, fluxkustomize.SubstituteWithDryRun(true))
			if err != nil {
				t.Fatal(err)
			}
			if sr == nil {
				sr = r // substitution disabled on it
			}
			obj, err := sr.Map()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, obj)
		}
		var have []map[string]any
		for _, o := range got.Objects {
			have = append(have, o.Get().Object)
		}
		// Compared as JSON: Flux's maps hold kyaml's int64s, drift's JSON numbers.
		hj, _ := json.Marshal(have)
		wj, _ := json.Marshal(want)
		if string(hj) != string(wj) {
			h, _ := yaml.Marshal(have)
			w, _ := yaml.Marshal(want)
			t.Errorf("%s: drift builds\n%s\nFlux builds\n%s", dir, h, w)
		}
		if len(want) != 3 && dir == "own" || len(want) != 2 && dir == "generated" {
			t.Errorf("%s: %d objects", dir, len(want))
		}
	}
}

// Files Flux's source-controller leaves out of the artifact (.sourceignore files,
// each scoped to its directory, the GitRepository's spec.ignore, and Flux's default
// exclusions) are not built: drift's build of a directory without a kustomization
// equals Flux's generator given the same ignore rules, and a kustomization naming an
// ignored file fails as Flux's build would.
func TestFilesFluxLeavesOutOfTheArtifactAreNotBuilt(t *testing.T) {
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" }
	root := writeTree(t, map[string]string{
		"app/a.yaml":               cm("a"),
		"app/b.yaml":               cm("b"),
		"app/drafts/c.yaml":        cm("c"),
		"app/keep/d.yaml":          cm("d"),
		"app/keep/.sourceignore":   "e.yaml\n",
		"app/keep/e.yaml":          cm("e"),
		"app/.sops.yaml":           "creation_rules: []\n",
		".sourceignore":            "app/b.yaml\n",
		"named/kustomization.yaml": "resources: [../app/b.yaml]\n",
	})
	fsys := os.DirFS(root)
	got := kustomizeSpec(fsys, Spec{Path: "app", Renderer: RendererKustomize, AsFlux: true, FluxIgnore: "app/drafts/\n"})
	if len(got.Failures) > 0 {
		t.Fatal(got.Failures)
	}
	var have []string
	for _, o := range got.Objects {
		have = append(have, o.Get().GetName())
	}
	// Flux: the artifact as source-controller archives it (its sourceignore patterns
	// read from the directory: the .sourceignore files, then spec.ignore, over the
	// default exclusions; what they match left out), then the generator and build.
	work := t.TempDir()
	if err := os.CopyFS(work, fsys); err != nil {
		t.Fatal(err)
	}
	ps, err := sourceignore.LoadIgnorePatterns(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps = append(ps, sourceignore.ReadPatterns(strings.NewReader("app/drafts/\n"), nil)...)
	matcher := sourceignore.NewDefaultMatcher(ps, nil)
	var drop []string
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(work, p)
		if err == nil && rel != "." && matcher.Match(strings.Split(rel, string(filepath.Separator)), d.IsDir()) {
			drop = append(drop, p)
		}
		return err
	})
	for _, p := range drop {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	ks := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"path": "app"}}}
	if _, err := fluxkustomize.NewGenerator(work, ks).WriteFile(filepath.Join(work, "app")); err != nil {
		t.Fatal(err)
	}
	m, err := fluxkustomize.SecureBuild(work, filepath.Join(work, "app"), false)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range m.Resources() {
		want = append(want, r.GetName())
	}
	if strings.Join(have, ",") != strings.Join(want, ",") || strings.Join(have, ",") != "a,d" {
		t.Errorf("drift builds %v, Flux %v (want a,d)", have, want)
	}
	named := kustomizeSpec(fsys, Spec{Path: "named", Renderer: RendererKustomize, AsFlux: true})
	if len(named.Failures) != 1 || !strings.Contains(named.Failures[0].Message, "b.yaml") {
		t.Errorf("a kustomization naming an ignored file: %+v", named.Failures)
	}
}
