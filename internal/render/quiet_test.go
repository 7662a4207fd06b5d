package render

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

type refusingFetcher struct{}

func (refusingFetcher) FetchChart(context.Context, ChartRef) (FetchedChart, error) {
	return FetchedChart{}, errors.New("https://charts.example.com is not in charts.allow")
}

// TestAnUnbuiltChartIsOneErrorThroughTheCache: a chart whose Chart.yaml a build step
// generates, rendered as the pipeline renders it (the cache detects the renderer), is
// one error naming what is missing, not one per template read as YAML.
func TestAnUnbuiltChartIsOneErrorThroughTheCache(t *testing.T) {
	t.Parallel()
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"
	fsys := fstest.MapFS{
		"cert-manager/Chart.template.yaml": {Data: []byte("apiVersion: v2\nname: cert-manager\nversion: v0.0.0\n")},
		"cert-manager/values.yaml":         {Data: []byte("a: 1\n")},
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		fsys["cert-manager/templates/"+n+".yaml"] = &fstest.MapFile{Data: []byte(tmpl)}
	}
	res, err := NewTestCache("", nil).Render("", fsys, Spec{Path: "cert-manager", Renderer: Detect(fsys, "cert-manager")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, "Chart.template.yaml") || len(res.Objects) != 0 {
		t.Errorf("failures %+v, objects %d: want one error naming Chart.template.yaml", res.Failures, len(res.Objects))
	}
}

// TestAGitignoredDependencyIsNamedWhenItCannotBeFetched: vendored .tgz dependencies
// the chart's own .gitignore leaves out of the commit, and a chart repository drift
// may not fetch from: the error names the .gitignore.
func TestAGitignoredDependencyIsNamedWhenItCannotBeFetched(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"stack/Chart.yaml":       {Data: []byte("apiVersion: v2\nname: stack\nversion: 1.0.0\ndependencies:\n- {name: grafana, version: 1.0.0, repository: https://charts.example.com}\n")},
		"stack/.gitignore":       {Data: []byte("charts/*.tgz\n")},
		"stack/templates/a.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")},
	}
	res, err := NewTestCache("", refusingFetcher{}).Render("", fsys, Spec{Path: "stack", Renderer: RendererHelm})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, "stack/.gitignore leaves charts/ out of the commit") || !strings.Contains(res.Failures[0].Message, "charts.allow") {
		t.Errorf("failures %+v", res.Failures)
	}
}
