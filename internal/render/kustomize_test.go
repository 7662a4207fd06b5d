package render

import (
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/reason"
)

// platform is the test repository of testdata/platform: a base with two overlays and
// a component, generators, patches, replacements, a chart with a subchart.
var platform = os.DirFS("../../testdata/platform")

func byDisplay(res *Result) map[string]Object {
	out := map[string]Object{}
	for _, o := range res.Objects {
		out[o.ID().Display()] = o
	}
	return out
}

func TestKustomizeBuildsOverlaysComponentsGeneratorsPatchesReplacements(t *testing.T) {
	staging := Kustomize(platform, "apps/shop/overlays/staging")
	if len(staging.Failures) > 0 {
		t.Fatalf("failures: %v", staging.Failures)
	}
	objs := byDisplay(staging)
	dep, ok := objs["apps/v1 Deployment shop-staging/shop"]
	if !ok {
		t.Fatalf("no Deployment in %v", keys(objs))
	}
	// Provenance: the resource file, not the overlay.
	if dep.Source != "apps/shop/base/deployment.yaml" {
		t.Errorf("Deployment source = %q, want the base's deployment.yaml", dep.Source)
	}
	// The component's patch and the overlay's image tag.
	if got, _, _ := unstructured.NestedString(dep.Get().Object, "spec", "template", "metadata", "annotations", "prometheus.io/scrape"); got != "true" {
		t.Errorf("component patch not applied: scrape annotation = %q", got)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Get().Object, "spec", "template", "spec", "containers")
	if img := containers[0].(map[string]any)["image"]; img != "registry.example/shop:1.1.0-rc.1" {
		t.Errorf("image = %v, want the overlay's tag", img)
	}
	// No origin annotation leaks into what is applied.
	if _, ok := dep.Get().GetAnnotations()[originAnnotation]; ok {
		t.Errorf("origin annotation left on the object")
	}
	// configMapGenerator: hashed name, source is the kustomization that generates it.
	var gen *Object
	for _, o := range staging.Objects {
		if strings.HasPrefix(o.Get().GetName(), "shop-config-") {
			gen = &o
		}
	}
	if gen == nil || gen.Source != "apps/shop/base/kustomization.yaml" {
		t.Fatalf("generated ConfigMap missing or wrong source: %+v", gen)
	}

	prod := Kustomize(platform, "apps/shop/overlays/prod")
	if len(prod.Failures) > 0 {
		t.Fatalf("failures: %v", prod.Failures)
	}
	pdep := byDisplay(prod)["apps/v1 Deployment shop-prod/shop"]
	if r, _, _ := unstructured.NestedInt64(pdep.Get().Object, "spec", "replicas"); r != 3 {
		t.Errorf("patch from file not applied: replicas = %d", r)
	}
	if got, _, _ := unstructured.NestedString(pdep.Get().Object, "spec", "template", "metadata", "annotations", "shop/config"); got != "shop-config" {
		t.Errorf("replacement not applied: %q", got)
	}
	// Inputs: every file the build read, the base's included, nothing of the chart.
	for _, want := range []string{"apps/shop/overlays/prod/kustomization.yaml", "apps/shop/overlays/prod/replicas.yaml", "apps/shop/base/deployment.yaml", "apps/shop/base/shop.properties"} {
		if !prod.Inputs.Touched(want) {
			t.Errorf("input %s not recorded: %+v", want, prod.Inputs)
		}
	}
	for _, not := range []string{"apps/shop/overlays/staging/kustomization.yaml", "charts/web/values.yaml", "platform/namespaces.yaml"} {
		if prod.Inputs.Touched(not) {
			t.Errorf("%s counted as an input of the prod overlay", not)
		}
	}
}

func keys(m map[string]Object) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers: [{name: web, image: nginx}]
`

func refused(t *testing.T, res *Result, file, entry, why string) {
	t.Helper()
	if len(res.Objects) != 0 || len(res.Failures) != 1 {
		t.Fatalf("want one failure and no objects, got %d objects, failures %v", len(res.Objects), res.Failures)
	}
	f := res.Failures[0]
	if f.Reason != reason.Refused || f.Source != file || !strings.Contains(f.Message, entry) || !strings.Contains(f.Message, why) {
		t.Errorf("failure = %s %q %q; want refused in %s naming %q and %q", f.Reason, f.Source, f.Message, file, entry, why)
	}
}

func TestKustomizeRefusesWhatWouldRunCodeOrReachTheNetwork(t *testing.T) {
	cases := []struct {
		name        string
		files       fstest.MapFS
		file, entry string
		why         string
	}{
		{"exec function in transformers file", fstest.MapFS{
			"app/kustomization.yaml": file("resources: [deploy.yaml]\ntransformers: [fn.yaml]\n"),
			"app/deploy.yaml":        file(deploy),
			"app/fn.yaml": file(`apiVersion: example.com/v1
kind: Stamp
metadata:
  name: stamp
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./stamp.sh
`),
		}, "app/fn.yaml", "transformers: fn.yaml", "exec KRM function"},
		{"container function inline", fstest.MapFS{
			"app/kustomization.yaml": file("resources: [deploy.yaml]\ngenerators:\n- |\n  apiVersion: example.com/v1\n  kind: Gen\n  metadata:\n    name: g\n    annotations:\n      config.kubernetes.io/function: |\n        container:\n          image: evil/gen\n"),
			"app/deploy.yaml":        file(deploy),
		}, "app/kustomization.yaml", "generators: (inline Gen)", "container KRM function"},
		{"external plugin", fstest.MapFS{
			"app/kustomization.yaml": file("resources: [deploy.yaml]\ntransformers: [plugin.yaml]\n"),
			"app/deploy.yaml":        file(deploy),
			"app/plugin.yaml":        file("apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata:\n  name: x\n"),
		}, "app/plugin.yaml", "transformers: plugin.yaml", "not a kustomize built-in plugin"},
		{"helmChartInflationGenerator", fstest.MapFS{
			"app/kustomization.yaml": file("helmChartInflationGenerator:\n- chartName: redis\n  chartRepoUrl: https://charts.example.com\n"),
		}, "app/kustomization.yaml", "helmChartInflationGenerator", "old Helm inflation field"},
		{"remote base", fstest.MapFS{
			"app/kustomization.yaml": file("resources:\n- github.com/example/manifests//base?ref=v1.0.0\n"),
		}, "app/kustomization.yaml", "resources: github.com/example/manifests//base?ref=v1.0.0", "remote bases are fetched with git"},
		{"remote file over https", fstest.MapFS{
			"app/kustomization.yaml": file("resources:\n- https://raw.example.com/deploy.yaml\n"),
		}, "app/kustomization.yaml", "resources: https://raw.example.com/deploy.yaml", "remote bases"},
		{"remote base in a base", fstest.MapFS{
			"app/kustomization.yaml":  file("resources: [../base]\n"),
			"base/kustomization.yaml": file("resources:\n- git@github.com:example/manifests.git\n"),
		}, "base/kustomization.yaml", "resources: git@github.com:example/manifests.git", "remote bases"},
		{"patch over http", fstest.MapFS{
			"app/kustomization.yaml": file("resources: [deploy.yaml]\npatches:\n- path: http://example.com/patch.yaml\n"),
			"app/deploy.yaml":        file(deploy),
		}, "app/kustomization.yaml", "patches: http://example.com/patch.yaml", "never fetched over the network"},
		{"path out of the repository", fstest.MapFS{
			"app/kustomization.yaml": file("resources:\n- ../../../etc/manifests\n"),
		}, "app/kustomization.yaml", "resources: ../../../etc/manifests", "leads outside the repository"},
		{"generator file out of the repository", fstest.MapFS{
			"app/kustomization.yaml": file("configMapGenerator:\n- name: c\n  files: [key=../../secret.txt]\n"),
		}, "app/kustomization.yaml", "configMapGenerator files: ../../secret.txt", "leads outside the repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refused(t, Kustomize(c.files, "app"), c.file, c.entry, c.why)
		})
	}
}

func TestKustomizeBuiltinPluginsStillWork(t *testing.T) {
	fsys := fstest.MapFS{
		"app/kustomization.yaml": file("resources: [deploy.yaml]\ntransformers: [labels.yaml]\n"),
		"app/deploy.yaml":        file(deploy),
		"app/labels.yaml":        file("apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: team\nlabels:\n  team: blue\nfieldSpecs:\n- path: metadata/labels\n  create: true\n"),
	}
	res := Kustomize(fsys, "app")
	if len(res.Failures) > 0 || len(res.Objects) != 1 {
		t.Fatalf("objects %d, failures %v", len(res.Objects), res.Failures)
	}
	if got := res.Objects[0].Get().GetLabels()["team"]; got != "blue" {
		t.Errorf("built-in transformer not applied: %v", res.Objects[0].Get().GetLabels())
	}
}

func TestKustomizeBuildErrorNamesTheKustomization(t *testing.T) {
	fsys := fstest.MapFS{
		"app/kustomization.yaml": file("resources: [deploy.yaml, missing.yaml]\n"),
		"app/deploy.yaml":        file(deploy),
	}
	res := Kustomize(fsys, "app")
	if len(res.Failures) != 1 || res.Failures[0].Source != "app/kustomization.yaml" || res.Failures[0].Reason != reason.RenderFailed ||
		!strings.Contains(res.Failures[0].Message, "resources: missing.yaml: not found in the repository") {
		t.Fatalf("failures = %+v", res.Failures)
	}
	// The failed build still counts its directory as input, for --base selection.
	if !res.Inputs.Touched("app/missing.yaml") {
		t.Errorf("inputs of a failed build do not cover its directory: %+v", res.Inputs)
	}
}

func TestDetect(t *testing.T) {
	for dir, want := range map[string]string{
		"apps/shop/overlays/prod":  RendererKustomize,
		"charts/web":               RendererHelm,
		"platform":                 RendererPlain,
		"platform/namespaces.yaml": RendererPlain,
	} {
		if got := Detect(platform, dir); got != want {
			t.Errorf("Detect(%s) = %s, want %s", dir, got, want)
		}
	}
}

// Render never decides a renderer (plan does): a spec without one is a failure that
// says it is a bug, in process and through the cache, and nothing is detected.
func TestASpecWithoutARendererFailsInsteadOfDetecting(t *testing.T) {
	t.Parallel()
	spec := Spec{Path: "apps/shop/overlays/prod"}
	direct, err := Render(platform, spec)
	if err != nil {
		t.Fatal(err)
	}
	cached, err := NewTestCache("", nil).Render("commit-1", platform, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*Result{direct, cached} {
		if len(res.Objects) != 0 || len(res.Failures) != 1 || res.Failures[0].Reason != reason.RenderFailed ||
			!strings.Contains(res.Failures[0].Message, "bug in drift") {
			t.Errorf("objects %d, failures %+v: want one failure saying no renderer was decided", len(res.Objects), res.Failures)
		}
	}
}

func TestInputsTouched(t *testing.T) {
	in := Inputs{Trees: []string{"charts/web"}, Files: []string{"values/prod.yaml"}, Dirs: []string{"apps/base"}}
	for p, want := range map[string]bool{
		"charts/web/templates/x.yaml": true,
		"charts/website/Chart.yaml":   false,
		"values/prod.yaml":            true,
		"values/staging.yaml":         false,
		"apps/base/new.yaml":          true,
		"apps/base/sub/new.yaml":      false,
	} {
		if got := in.Touched(p); got != want {
			t.Errorf("Touched(%s) = %v, want %v", p, got, want)
		}
	}
}
