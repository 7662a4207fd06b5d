package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report"
)

// TestHostileInputsAreRefusedAndNothingRuns gives drift a repository that tries to run
// code, reach the network, read outside the repository and read the cluster while
// rendering. Each target fails with the promised message, the others are still
// diffed, and marker files prove that no program ran: not the repository's exec
// function, not git (remote bases), not helm (helmCharts).
func TestHostileInputsAreRefusedAndNothingRuns(t *testing.T) {
	ns := namespace(t)
	apply(t, "kubectl", sub("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: NS}\nstringData: {password: cluster-only-secret}\n", ns))

	markers := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\ndata: {k: outside-file-content}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\ndata: {k: v}\n"
	r := repo(t, map[string]string{
		"drift.yaml": sub(`targets:
  - name: exec-function
    path: hostile/exec
  - name: helm-charts
    path: hostile/helmcharts
  - name: remote-base
    path: hostile/remote
  - name: symlink-kustomize
    path: hostile/klink
  - name: symlink-plain
    path: hostile/plainlink
  - name: values-escape
    path: hostile/chart
    helm:
      valuesFiles: [../../../outside-values.yaml]
  - name: lookup
    path: hostile/lookup
    namespace: NS
  - name: fine
    path: fine
    namespace: NS
`, ns),
		"hostile/exec/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
		"hostile/exec/cm.yaml":            cm,
		"hostile/exec/fn.yaml": `apiVersion: example.com/v1
kind: Stamp
metadata:
  name: stamp
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./stamp.sh
`,
		"hostile/exec/stamp.sh":                 "#!/bin/sh\ntouch " + filepath.Join(markers, "exec") + "\ncat\n",
		"hostile/helmcharts/kustomization.yaml": "helmCharts:\n- name: redis\n  repo: https://charts.example.com\n  version: 1.0.0\n",
		"hostile/remote/kustomization.yaml":     "resources:\n- https://github.com/example/manifests//base?ref=v1\n",
		"hostile/klink/kustomization.yaml":      "resources: [cm.yaml]\n",
		"hostile/plainlink/ok.yaml":             strings.Replace(cm, "fine", "plain-ok", 1),
		"hostile/chart/Chart.yaml":              "apiVersion: v2\nname: chart\nversion: 1.0.0\n",
		"hostile/chart/templates/cm.yaml":       cm,
		"hostile/lookup/Chart.yaml":             "apiVersion: v2\nname: lookup\nversion: 1.0.0\n",
		"hostile/lookup/templates/cm.yaml": sub(`{{- $s := lookup "v1" "Secret" "NS" "db" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: looked-up
data:
  found: {{ if $s }}"yes"{{ else }}"no"{{ end }}
  password: {{ $s.data | default dict | toJson | quote }}
`, ns),
		"fine/cm.yaml": cm,
	})
	// Symlinks to a file outside the repository, absolute and relative.
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(r.Dir, "hostile/klink/cm.yaml")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(r.Dir, "hostile/plainlink"), filepath.Join(outside, "secret.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(r.Dir, "hostile/plainlink/escape.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(r.Dir, "hostile/exec/stamp.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("hostile"); err != nil {
		t.Fatal(err)
	}
	// git and helm on PATH only leave a marker: if kustomize ran either, it shows.
	bin := t.TempDir()
	for _, tool := range []string{"git", "helm"} {
		script := "#!/bin/sh\ntouch " + filepath.Join(markers, tool) + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	for _, ref := range []string{"main", ""} { // the commit, and the work tree
		args := []string{"diff", "--repo", r.Dir, "-o", "json"}
		if ref != "" {
			args = append(args, "--ref", ref)
		}
		o := drift(t, args...)
		rep := decodeReport(t, o)
		if o.code != 2 || rep.Complete {
			t.Fatalf("ref %q: exit %d, complete %v; want 2 and incomplete\n%s", ref, o.code, rep.Complete, o.stderr)
		}
		errs := map[string]report.Object{}
		for _, tg := range rep.Targets {
			for _, ob := range tg.Objects {
				if ob.Category == report.Error {
					errs[tg.Name] = ob
				}
			}
		}
		want := map[string]struct{ source, msg string }{
			"exec-function": {"hostile/exec/fn.yaml", "transformers: fn.yaml (document 1, Stamp): exec KRM function: drift never runs programs"},
			// A chart from a repository drift.yaml does not allow: not fetched.
			"helm-charts":       {"hostile/helmcharts/kustomization.yaml", "https://charts.example.com is not in charts.allow"},
			"remote-base":       {"hostile/remote/kustomization.yaml", "resources: https://github.com/example/manifests//base?ref=v1: remote bases are fetched with git"},
			"symlink-kustomize": {"hostile/klink/kustomization.yaml", "resources: cm.yaml: symlink hostile/klink/cm.yaml -> " + filepath.Join(outside, "secret.yaml") + " leads outside the repository"},
			"symlink-plain":     {"hostile/plainlink/escape.yaml", "symlink cannot be followed"},
			"values-escape":     {"hostile/chart/Chart.yaml", "values file ../../../outside-values.yaml leads outside the repository"},
		}
		if ref == "" {
			// os.Root words it its own way in the work tree.
			want["symlink-kustomize"] = struct{ source, msg string }{"hostile/klink/kustomization.yaml", "resources: cm.yaml:"}
		}
		for name, w := range want {
			ob, ok := errs[name]
			if !ok {
				t.Errorf("ref %q: target %s has no error", ref, name)
				continue
			}
			why := "refused"
			if name == "helm-charts" {
				why = "chart-unavailable"
			}
			if ob.Source != w.source || !strings.Contains(ob.Error, w.msg) || string(ob.ErrorReason) != why {
				t.Errorf("ref %q: %s: %s %s %q\nwant %s %s containing %q", ref, name, ob.Source, ob.ErrorReason, ob.Error, w.source, why, w.msg)
			}
		}
		if len(errs) != len(want) {
			t.Errorf("ref %q: errors in %d targets, want %d: %v", ref, len(errs), len(want), errs)
		}
		// The other targets are still diffed, lookup found nothing.
		if c := cat2(rep, "fine", "ConfigMap"); c != report.Add {
			t.Errorf("ref %q: fine target: %q", ref, c)
		}
		for _, tg := range rep.Targets {
			if tg.Name != "lookup" {
				continue
			}
			if len(tg.Objects) != 1 || !strings.Contains(tg.Objects[0].Diff, `+  found: "no"`) || !strings.Contains(tg.Objects[0].Diff, `+  password: '{}'`) {
				t.Errorf("ref %q: lookup target: %+v", ref, tg.Objects)
			}
		}
		for _, leak := range []string{"outside-file-content", "cluster-only-secret"} {
			if strings.Contains(o.stdout+o.stderr, leak) {
				t.Errorf("ref %q: output shows %s", ref, leak)
			}
		}
	}
	if entries, _ := os.ReadDir(markers); len(entries) > 0 {
		t.Fatalf("something ran: markers %v", entries)
	}

	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main")
	text := regexp.MustCompile(`-> \S*/secret\.yaml`).ReplaceAllString(o.stdout, "-> OUTSIDE/secret.yaml")
	// The namespace (and so drift.yaml and the commit) depends on the tests that ran before.
	text = regexp.MustCompile(`commit [0-9a-f]{12}`).ReplaceAllString(strings.ReplaceAll(text, ns, "NS"), "commit COMMIT")
	golden.Check(t, "hostile.txt", []byte(text))
}
