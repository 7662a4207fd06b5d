package render

import (
	"os"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// A kustomization's helmCharts entry, its chart in the chart home: drift's build
// equals kustomize's over what `helm template` renders (the Helm SDK's install
// action, client-only, with the values kustomize passes: valuesInline over the
// values file, then the additional values files), with the kustomization's own
// resources and transformers; CRDs are left out without includeCRDs.
func TestHelmChartsAreInflatedAsKustomizeWithHelmDoes(t *testing.T) {
	chart := map[string]string{
		"app/charts/web/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"app/charts/web/values.yaml":       "replicas: 1\ncolor: blue\nsize: s\n",
		"app/charts/web/crds/crd.yaml":     "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n",
		"app/charts/web/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\n  namespace: {{ .Release.Namespace }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n  color: {{ .Values.color | quote }}\n  size: {{ .Values.size | quote }}\n",
		"app/extra-values.yaml":            "size: xl\n",
		"app/cm.yaml":                      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own}\n",
		"app/kustomization.yaml": "namePrefix: team-\nresources: [cm.yaml]\nhelmCharts:\n- name: web\n  releaseName: site\n  namespace: web\n" +
			"  valuesInline: {color: green}\n  additionalValuesFiles: [extra-values.yaml]\n",
	}
	root := writeTree(t, chart)
	got := kustomizeSpec(os.DirFS(root), Spec{Path: "app", Renderer: RendererKustomize})
	if len(got.Failures) > 0 {
		t.Fatal(got.Failures)
	}

	// kustomize's side: helm template's output as the generator would add it.
	ch, err := loader.Load(root + "/app/charts/web")
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(&action.Configuration{})
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = "site", "web"
	in.KubeVersion = &chartutil.DefaultCapabilities.KubeVersion
	rel, err := in.Run(ch, map[string]any{"replicas": 1, "color": "green", "size": "xl"})
	if err != nil {
		t.Fatal(err)
	}
	fSys := filesys.MakeFsInMemory()
	for name, content := range map[string]string{
		"/cm.yaml": chart["app/cm.yaml"], "/helm.yaml": rel.Manifest,
		"/kustomization.yaml": "namePrefix: team-\nresources: [cm.yaml, helm.yaml]\n",
	} {
		if err := fSys.WriteFile(name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fSys, "/")
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	var have strings.Builder
	for _, o := range got.Objects {
		data, _ := o.Get().MarshalJSON()
		have.WriteString(strings.TrimSpace(string(data)) + "\n")
	}
	var wantJSON strings.Builder
	for _, r := range m.Resources() {
		data, _ := r.MarshalJSON()
		wantJSON.WriteString(strings.TrimSpace(string(data)) + "\n")
	}
	if have.String() != wantJSON.String() {
		t.Errorf("drift builds\n%s\nkustomize over helm template gives\n%s", have.String(), want)
	}
	if !strings.Contains(have.String(), `"team-site-settings"`) || !strings.Contains(have.String(), `"color":"green"`) || !strings.Contains(have.String(), `"size":"xl"`) || strings.Contains(have.String(), "widgets") {
		t.Errorf("the fixture does not exercise what it should:\n%s", have.String())
	}
	// valuesMerge: merge keeps the values file's over valuesInline (the chart's own
	// values.yaml, when no valuesFile is given).
	merged := writeTree(t, map[string]string{
		"app/charts/web/Chart.yaml": chart["app/charts/web/Chart.yaml"], "app/charts/web/values.yaml": chart["app/charts/web/values.yaml"],
		"app/charts/web/templates/cm.yaml": chart["app/charts/web/templates/cm.yaml"],
		"app/kustomization.yaml":           "helmCharts:\n- {name: web, releaseName: site, valuesMerge: merge, valuesInline: {color: green, extra: x}}\n",
	})
	res := kustomizeSpec(os.DirFS(merged), Spec{Path: "app", Renderer: RendererKustomize})
	if len(res.Failures) > 0 || len(res.Objects) != 1 || res.Objects[0].Get().Object["data"].(map[string]any)["color"] != "blue" {
		t.Errorf("valuesMerge merge: %+v %v", res.Failures, res.Objects)
	}
	if !slices.Contains(got.Inputs.Trees, "app/charts/web") || !slices.Contains(got.Inputs.Files, "app/extra-values.yaml") {
		t.Errorf("inputs: %+v", got.Inputs)
	}
}

// Flux does not inflate Helm charts; a chart neither in the chart home nor fetched,
// and an entry without releaseName, are errors that say what to do.
func TestHelmChartsThatCannotBeInflated(t *testing.T) {
	for _, c := range []struct {
		name, kustomization string
		flux                bool
		want                string
	}{
		{"flux", "helmCharts:\n- {name: web, releaseName: web}\n", true, "does not inflate Helm charts"},
		{"no release name", "helmCharts:\n- {name: web}\n", false, "releaseName is missing"},
		{"not fetched", "helmCharts:\n- {name: redis, releaseName: r, repo: 'https://charts.example.com', version: 1.0.0}\n", false, "charts.allow"},
		{"nowhere", "helmCharts:\n- {name: redis, releaseName: r}\n", false, "no chart at app/charts/redis"},
	} {
		root := writeTree(t, map[string]string{"app/kustomization.yaml": c.kustomization})
		got := kustomizeSpec(os.DirFS(root), Spec{Path: "app", Renderer: RendererKustomize, AsFlux: c.flux})
		if len(got.Failures) != 1 || !strings.Contains(got.Failures[0].Message, c.want) {
			t.Errorf("%s: %+v", c.name, got.Failures)
		}
	}
}

// Values files of a fetched chart itself: over the chart's values.yaml as Argo CD's
// valueFiles pass them to helm template, or in its place as Flux's source-controller
// packages a chart with chart.spec.valuesFiles.
func TestValuesFilesOfAFetchedChart(t *testing.T) {
	dir := t.TempDir()
	ch := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "web", Version: "1.0.0"},
		Values:    map[string]any{"color": "blue", "size": "s"},
		Raw:       []*chart.File{{Name: "values.yaml", Data: []byte("color: blue\nsize: s\n")}},
		Files:     []*chart.File{{Name: "values-prod.yaml", Data: []byte("color: red\n")}},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata:\n  color: {{ .Values.color | quote }}\n  size: {{ .Values.size | default \"none\" | quote }}\n")}},
	}
	archive, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	data := func(replace bool) map[string]any {
		opts := HelmOptions{ReleaseName: "web", ReleaseNamespace: "web", Chart: &ChartRef{RepoURL: "https://charts.example.com", Name: "web", Version: "1.0.0"},
			Archive: archive, ValuesFiles: []string{ChartValuesPrefix + "values-prod.yaml"}, ReplaceChartValues: replace}
		res := Helm(os.DirFS(t.TempDir()), "", opts)
		if len(res.Failures) > 0 || len(res.Objects) != 1 {
			t.Fatalf("replace %v: %+v", replace, res.Failures)
		}
		return res.Objects[0].Get().Object["data"].(map[string]any)
	}
	if d := data(false); d["color"] != "red" || d["size"] != "s" {
		t.Errorf("over the chart's values (Argo CD): %v", d)
	}
	if d := data(true); d["color"] != "red" || d["size"] != "none" {
		t.Errorf("in place of the chart's values (Flux): %v", d)
	}
}
