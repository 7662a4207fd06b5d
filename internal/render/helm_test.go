package render

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/reason"
)

var webOptions = HelmOptions{
	ReleaseName: "web", ReleaseNamespace: "web",
	ValuesFiles: []string{"values-common.yaml", "values-prod.yaml"},
	Values:      map[string]any{"cache": map[string]any{"maxMemory": "256mb"}},
	KubeVersion: "v1.36.3",
	APIVersions: []string{"v1", "apps/v1", "example.com/v1", "example.com/v1/Widget"},
}

func TestHelmRendersChartSubchartValuesCapabilitiesCRDsAndHooks(t *testing.T) {
	res := Helm(platform, "charts/web", webOptions)
	if len(res.Failures) > 0 {
		t.Fatalf("failures: %v", res.Failures)
	}
	objs := byDisplay(res)
	want := []string{
		"apiextensions.k8s.io/v1 CustomResourceDefinition widgets.example.com",
		"apps/v1 Deployment web", "apps/v1 Deployment web-cache", "v1 ConfigMap web-settings", "batch/v1 Job web-migrate",
	}
	if len(objs) != len(want) {
		t.Errorf("objects = %v, want %v", keys(objs), want)
	}
	for _, w := range want {
		if _, ok := objs[w]; !ok {
			t.Errorf("missing %s in %v", w, keys(objs))
		}
	}
	// Values: chart defaults < values-common < values-prod < inline values.
	dep := objs["apps/v1 Deployment web"]
	if r, _, _ := unstructured.NestedInt64(dep.Get().Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas = %d, want 2 from values-prod.yaml", r)
	}
	c, _, _ := unstructured.NestedSlice(dep.Get().Object, "spec", "template", "spec", "containers")
	ctr := c[0].(map[string]any)
	if ctr["image"] != "registry.example/web:2.4.1" || ctr["env"].([]any)[0].(map[string]any)["value"] != "hello from prod" {
		t.Errorf("container = %v", ctr)
	}
	cache := objs["apps/v1 Deployment web-cache"]
	if cache.Source != "charts/web/charts/cache/templates/deployment.yaml" {
		t.Errorf("subchart source = %s", cache.Source)
	}
	if !strings.Contains(stringOf(cache.Get().Object), "256mb") {
		t.Errorf("inline values did not reach the subchart: %v", cache.Get().Object)
	}
	// lookup finds nothing; capabilities are the cluster's.
	data, _, _ := unstructured.NestedStringMap(objs["v1 ConfigMap web-settings"].Get().Object, "data")
	if data["seenBefore"] != "no" || data["kubeVersion"] != "v1.36.3" || data["widgets"] != "served" || data["namespace"] != "web" {
		t.Errorf("configmap data = %v", data)
	}
	hook := objs["batch/v1 Job web-migrate"]
	if len(hook.Notes) != 1 || hook.Notes[0].Reason != reason.HelmHook || !strings.Contains(hook.Notes[0].Message, "pre-upgrade, pre-install") {
		t.Errorf("hook notes = %v", hook.Notes)
	}
	if crd := objs["apiextensions.k8s.io/v1 CustomResourceDefinition widgets.example.com"]; crd.Source != "charts/web/crds/widgets.yaml" || len(crd.Notes) != 1 {
		t.Errorf("crd = %s %v", crd.Source, crd.Notes)
	}
	if dep.Source != "charts/web/templates/deployment.yaml" {
		t.Errorf("source = %s", dep.Source)
	}
}

func stringOf(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch c := v.(type) {
		case map[string]any:
			for _, x := range c {
				walk(x)
			}
		case []any:
			for _, x := range c {
				walk(x)
			}
		case string:
			b.WriteString(c + " ")
		}
	}
	walk(v)
	return b.String()
}

func TestHelmCapabilitiesFollowTheCluster(t *testing.T) {
	opts := webOptions
	opts.APIVersions = []string{"v1", "apps/v1"}
	res := Helm(platform, "charts/web", opts)
	data, _, _ := unstructured.NestedStringMap(byDisplay(res)["v1 ConfigMap web-settings"].Get().Object, "data")
	if _, ok := data["widgets"]; ok {
		t.Errorf("widgets rendered though the cluster does not serve example.com/v1 Widget")
	}
	opts.KubeVersion = "v1.27.4"
	res = Helm(platform, "charts/web", opts)
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, "requires kubeVersion >=1.28.0-0") {
		t.Errorf("failures = %v", res.Failures)
	}
}

const chartYAML = "apiVersion: v2\nname: app\nversion: 1.0.0\n"

func TestHelmFailuresNameChartAndTemplate(t *testing.T) {
	cases := []struct {
		name   string
		files  fstest.MapFS
		opts   HelmOptions
		source string
		reason reason.Reason
		msg    string
	}{
		{"missing dependency", fstest.MapFS{
			"app/Chart.yaml":        file(chartYAML + "dependencies:\n- name: redis\n  version: 1.0.0\n  repository: https://charts.example.com\n"),
			"app/templates/cm.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
		}, HelmOptions{ReleaseName: "r"}, "app/Chart.yaml", reason.RenderFailed, "dependency redis is declared in Chart.yaml but not vendored in app/charts/: run `helm dependency build app`"},
		{"template error", fstest.MapFS{
			"app/Chart.yaml":         file(chartYAML),
			"app/templates/bad.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.missing.deep }}\n"),
		}, HelmOptions{ReleaseName: "r"}, "app/templates/bad.yaml", reason.RenderFailed, "chart app (app): template failed"},
		{"values file out of the repository", fstest.MapFS{
			"app/Chart.yaml": file(chartYAML),
		}, HelmOptions{ReleaseName: "r", ValuesFiles: []string{"../../etc/values.yaml"}}, "app/Chart.yaml", reason.Refused, "values file ../../etc/values.yaml leads outside the repository"},
		{"values file absolute", fstest.MapFS{
			"app/Chart.yaml": file(chartYAML),
		}, HelmOptions{ReleaseName: "r", ValuesFiles: []string{"/etc/passwd"}}, "app/Chart.yaml", reason.Refused, "values file /etc/passwd is an absolute path"},
		{"values file missing", fstest.MapFS{
			"app/Chart.yaml": file(chartYAML),
		}, HelmOptions{ReleaseName: "r", ValuesFiles: []string{"prod.yaml"}}, "app/prod.yaml", reason.RenderFailed, "values file prod.yaml cannot be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Helm(c.files, "app", c.opts)
			if len(res.Failures) != 1 || len(res.Objects) != 0 {
				t.Fatalf("objects %d, failures %v", len(res.Objects), res.Failures)
			}
			f := res.Failures[0]
			if f.Source != c.source || f.Reason != c.reason || !strings.Contains(f.Message, c.msg) {
				t.Errorf("failure = %s %s %q; want %s %s containing %q", f.Source, f.Reason, f.Message, c.source, c.reason, c.msg)
			}
		})
	}
}

func TestHelmValuesMayClimbInsideTheRepository(t *testing.T) {
	fsys := fstest.MapFS{
		"charts/app/Chart.yaml":        file(chartYAML),
		"charts/app/templates/cm.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n"),
		"envs/prod/values.yaml":        file("name: from-envs\n"),
	}
	res := Helm(fsys, "charts/app", HelmOptions{ReleaseName: "r", ValuesFiles: []string{"../../envs/prod/values.yaml"}})
	if len(res.Failures) > 0 || len(res.Objects) != 1 || res.Objects[0].Get().GetName() != "from-envs" {
		t.Fatalf("objects %v failures %v", res.Objects, res.Failures)
	}
	if !res.Inputs.Touched("envs/prod/values.yaml") || !res.Inputs.Touched("charts/app/templates/cm.yaml") {
		t.Errorf("inputs = %+v", res.Inputs)
	}
}

// Values given inline reach templates as a values file's do: numbers as float64, as
// `helm -f` reads them (podinfo tests kindIs "float64" before printing a number).
func TestHelmInlineValuesAreReadAsAValuesFile(t *testing.T) {
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  kind: {{ kindOf .Values.ttl | quote }}\n" +
		"  {{- if kindIs \"float64\" .Values.ttl }}\n  ttl: {{ .Values.ttl | quote }}\n  {{- end }}\n  ratio: {{ .Values.nested.ratio | quote }}\n"
	fsys := fstest.MapFS{
		"app/Chart.yaml":        file(chartYAML),
		"app/templates/cm.yaml": file(tmpl),
		"app/ci.yaml":           file("ttl: 100\nnested: {ratio: 2}\n"),
	}
	fromFile := Helm(fsys, "app", HelmOptions{ReleaseName: "r", ValuesFiles: []string{"ci.yaml"}})
	inline := Helm(fsys, "app", HelmOptions{ReleaseName: "r", Values: map[string]any{"ttl": 100, "nested": map[string]any{"ratio": int64(2)}}})
	for name, res := range map[string]*Result{"values file": fromFile, "inline": inline} {
		if len(res.Failures) > 0 || len(res.Objects) != 1 {
			t.Fatalf("%s: objects %v failures %v", name, res.Objects, res.Failures)
		}
	}
	want, got := fromFile.Objects[0].Get().Object["data"], inline.Objects[0].Get().Object["data"]
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inline values render %v, a values file %v", got, want)
	}
	if d, _ := want.(map[string]any); d["kind"] != "float64" || d["ttl"] != "100" {
		t.Errorf("a values file's number should be a float64: %v", want)
	}
}
