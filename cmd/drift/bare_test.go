package main

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// chartsRepo is a repository of wrapper charts, kustomize overlays, plain manifests
// and other tools' YAML, with no drift.yaml and no Argo CD or Flux object: what a
// home lab's Argo CD repository looks like when its Applications live elsewhere.
func chartsRepo(greeting string) map[string]string {
	chart := func(name string) map[string]string {
		return map[string]string{
			"apps/" + name + "/Chart.yaml":          "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n",
			"apps/" + name + "/values.yaml":         "greeting: " + greeting + "\nreplicas: 1\n",
			"apps/" + name + "/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}, namespace: default, labels: {chart: {{ .Chart.Name }}}}\ndata: {greeting: {{ .Values.greeting | quote }}}\n",
			"apps/" + name + "/templates/NOTES.txt": "{{ .Chart.Name }} is installed\n",
		}
	}
	files := map[string]string{
		"README.md":                         "# home lab\n",
		"mkdocs.yml":                        "site_name: home lab\nnav: [{Home: index.md}]\n",
		"ansible/playbook.yml":              "- hosts: all\n  tasks: [{name: ping, ping: {}}]\n",
		"renovate.json":                     `{"extends": ["config:recommended"]}`,
		"kustomize/base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [cm.yaml]\n",
		"kustomize/base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: default}\ndata: {a: b}\n",
		"kustomize/prod/kustomization.yaml": "resources: [../base]\nnamePrefix: prod-\n",
		"plain/cm.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: default}\n",
	}
	for _, name := range []string{"web", "api"} {
		for k, v := range chart(name) {
			files[k] = v
		}
	}
	return files
}

// TestARepositoryOfChartsIsPreviewedAsItWouldBeApplied: with no drift.yaml and no
// Argo CD or Flux object, drift previews the repository as what is in it would be
// applied: each wrapper chart rendered with Helm and each kustomize overlay built,
// as targets of their own; Chart.yaml, values files, kustomization files, templates
// and other tools' YAML are never objects nor errors, only a note names the YAML that
// is no object; a chart's release is named after its directory, as with --path. Run
// as the Action runs it: a documentation-only change is no change (exit 0, no
// error); a change to one chart's values is that chart's change.
func TestARepositoryOfChartsIsPreviewedAsItWouldBeApplied(t *testing.T) {
	base := chartsRepo("hello")
	dir, baseSHA := actionsCheckout(t, base, map[string]string{"README.md": "# home lab, documented\n", "mkdocs.yml": "site_name: the home lab\n"})
	rep, o := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", "HEAD")
	if o.code != 0 || !rep.Complete || rep.Summary.Error != 0 {
		t.Fatalf("a documentation-only change: exit %d, %+v\n%s", o.code, rep.Summary, o.stderr)
	}

	dir, baseSHA = actionsCheckout(t, base, map[string]string{"apps/web/values.yaml": "greeting: bonjour\nreplicas: 1\n"})
	rep, o = driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", "HEAD")
	if o.code != 1 || !rep.Complete || rep.Summary.Error != 0 || rep.Summary.Modify != 1 || rep.Summary.Add != 0 {
		t.Fatalf("a chart's values: exit %d, %+v\n%s\n%s", o.code, rep.Summary, o.stdout, o.stderr)
	}
	web := targetNamed(rep, "apps/web")
	if web == nil || web.Renderer != "helm" || len(web.Objects) != 1 || web.Objects[0].Category != report.Modify || web.Objects[0].Name != "web" {
		t.Errorf("apps/web: %+v", web)
	}

	// Without a base, every target and what it renders.
	rep, o = driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--ref", "HEAD")
	if o.code != 1 || !rep.Complete || rep.Summary.Error != 0 {
		t.Fatalf("the whole repository: exit %d, %+v\n%s", o.code, rep.Summary, o.stdout)
	}
	want := map[string]string{"apps/web": "helm", "apps/api": "helm", "kustomize/prod": "kustomize", ".": "plain"}
	for name, renderer := range want {
		if tg := targetNamed(rep, name); tg == nil || tg.Renderer != renderer {
			t.Errorf("target %s: %+v, want one rendered with %s", name, tg, renderer)
		}
	}
	if targetNamed(rep, "kustomize/base") != nil {
		t.Errorf("kustomize/base, which kustomize/prod includes, is a target of its own")
	}
	if got := categories(rep); got["ConfigMap/prod-shared"] != "add" || got["ConfigMap/plain"] != "add" || got["ConfigMap/shared"] != "" {
		t.Errorf("objects: %v", got)
	}
	root := targetNamed(rep, ".")
	notes := strings.Join(root.Notes, "\n")
	for _, f := range []string{"mkdocs.yml", "ansible/playbook.yml"} {
		if !strings.Contains(notes, f) {
			t.Errorf("the note does not name %s:\n%s", f, notes)
		}
	}
	if !strings.Contains(notes, "apps/api, apps/web, kustomize/prod") {
		t.Errorf("the note does not name the directories rendered on their own:\n%s", notes)
	}
}
