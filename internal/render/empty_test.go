package render

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/drift-gitops/drift/internal/reason"
)

// A target that renders nothing says why: one error naming the files of a format
// drift does not render, or a note when there is simply nothing.
func TestATargetThatRendersNothingSaysWhy(t *testing.T) {
	fsys := fstest.MapFS{
		"jsonnet/main.jsonnet":      file("{}"),
		"jsonnet/lib/k.libsonnet":   file("{}"),
		"jsonnet/README.md":         file("# app"),
		"cue/a.cue":                 file("x: 1"),
		"cue/b.cue":                 file("x: 1"),
		"cue/c.cue":                 file("x: 1"),
		"cue/d.cue":                 file("x: 1"),
		"empty/README.md":           file("nothing here"),
		"kust/kustomization.yaml":   file("resources: []\n"),
		"chart/Chart.yaml":          file(chartYAML),
		"chart/templates/off.yaml":  file("{{ if .Values.on }}apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n{{ end }}\n"),
		"some/cm.yaml":              file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
		"some/.hidden/skip.jsonnet": file("{}"),
	}
	for _, tc := range []struct {
		path, wantFailure, wantNote string
	}{
		{"jsonnet", "renders no objects: it holds jsonnet (jsonnet/lib/k.libsonnet, jsonnet/main.jsonnet)", ""},
		{"cue", "CUE (cue/a.cue, cue/b.cue, cue/c.cue and 1 more)", ""},
		{"empty", "", "empty renders no objects (plain)"},
		{"kust", "", "kust renders no objects (kustomize)"},
		{"chart", "", "chart renders no objects (helm)"},
		{"some", "", ""},
	} {
		res, err := Render(fsys, Spec{Path: tc.path, Renderer: Detect(fsys, tc.path), Helm: HelmOptions{ReleaseName: "r"}})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		switch {
		case tc.wantFailure != "":
			if len(res.Failures) != 1 || res.Failures[0].Reason != reason.NothingRendered || !strings.Contains(res.Failures[0].Message, tc.wantFailure) {
				t.Errorf("%s: failures %+v, want one saying %q", tc.path, res.Failures, tc.wantFailure)
			}
		case tc.wantNote != "":
			if len(res.Failures) != 0 || len(res.Notes) != 1 || res.Notes[0] != tc.wantNote+": nothing to preview" {
				t.Errorf("%s: failures %+v notes %q, want the note %q", tc.path, res.Failures, res.Notes, tc.wantNote)
			}
		default:
			if len(res.Objects) != 1 || len(res.Failures) != 0 || len(res.Notes) != 0 {
				t.Errorf("%s: %d objects, failures %+v, notes %q", tc.path, len(res.Objects), res.Failures, res.Notes)
			}
		}
	}
}

// A chart whose Chart.yaml a build step generates is one error, not an error per
// template read as YAML (Detect says helm); told it is plain YAML, drift reads it so.
func TestAChartWithoutChartYAMLIsOneError(t *testing.T) {
	tmpl := file("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n")
	for _, fsys := range []fstest.MapFS{
		{"app/Chart.template.yaml": file(chartYAML), "app/templates/a.yaml": tmpl, "app/templates/b.yaml": tmpl},
		{"app/values.yaml": file("name: x\n"), "app/templates/a.yaml": tmpl, "app/templates/b.yaml": tmpl},
	} {
		res, err := Render(fsys, Spec{Path: "app", Renderer: Detect(fsys, "app")})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 1 || res.Failures[0].Source != "app" || !strings.Contains(res.Failures[0].Message, "a Helm chart without Chart.yaml") {
			t.Errorf("failures %+v, want one for the chart", res.Failures)
		}
		plain, err := Render(fsys, Spec{Path: "app", Renderer: RendererPlain})
		if err != nil {
			t.Fatal(err)
		}
		if len(plain.Failures) < 2 {
			t.Errorf("renderer plain: failures %+v, want the templates read as YAML", plain.Failures)
		}
	}
}

// A dependency missing from charts/ because .gitignore leaves charts/ out says so.
func TestAMissingDependencyNamesTheGitignore(t *testing.T) {
	fsys := fstest.MapFS{
		".gitignore":           file("# build output\n**/charts/*.tgz\n"),
		"app/Chart.yaml":       file(chartYAML + "dependencies:\n- {name: redis, version: 1.0.0, repository: https://charts.example.com}\n"),
		"app/templates/a.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"),
	}
	res := Helm(fsys, "app", HelmOptions{ReleaseName: "r"})
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, "(.gitignore leaves charts/ out of the commit") {
		t.Errorf("failures %+v", res.Failures)
	}
}
