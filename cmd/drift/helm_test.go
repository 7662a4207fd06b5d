package main

import (
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/drift-gitops/drift/internal/applier/helm"
	"github.com/drift-gitops/drift/internal/report"
)

// helmRun runs the Helm SDK's install (or upgrade) of the chart in the repository's
// work tree, as helm install / helm upgrade do.
func helmRun(t *testing.T, dir, ns, release string, upgrade bool) {
	t.Helper()
	helmRunValues(t, dir, ns, release, upgrade, nil)
}

// helmRunValues is helmRun with values, as helm's --set-file/--values give them.
func helmRunValues(t *testing.T, dir, ns, release string, upgrade bool, values map[string]any) {
	t.Helper()
	kube.ManagedFieldsManager = helm.FieldManager
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &env.Kubeconfig, &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.LoadDir(filepath.Join(dir, "chart"))
	if err != nil {
		t.Fatal(err)
	}
	if upgrade {
		up := action.NewUpgrade(cfg)
		up.Namespace = ns
		_, err = up.Run(release, ch, values)
	} else {
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace = release, ns
		_, err = in.Run(ch, values)
	}
	if err != nil {
		t.Fatalf("helm: %v", err)
	}
}

// TestHelmApplierPredictsHelmUpgrade: a chart installed with helm install, then a
// key dropped from its values and a template removed. The helm applier shows what
// helm upgrade does (the key removed, the dropped object deleted); the default
// applier, which would not remove the key, says the cluster looks applied by Helm.
// Right after the real helm upgrade, the helm applier finds nothing to change.
func TestHelmApplierPredictsHelmUpgrade(t *testing.T) {
	ns := namespace(t)
	files := map[string]string{
		"drift.yaml":        "targets:\n- {name: app, path: chart, namespace: " + ns + ", applier: helm, helm: {releaseName: app}}\n",
		"chart/Chart.yaml":  "apiVersion: v2\nname: app\nversion: 1.0.0\n",
		"chart/values.yaml": "settings: {a: '1', b: '2'}\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata:\n" +
			"{{- range $k, $v := .Values.settings }}\n  {{ $k }}: {{ $v | quote }}\n{{- end }}\n",
		"chart/templates/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {x: '1'}\n",
		// A block scalar ending the document: Helm applies it with its final newline.
		"chart/templates/redis.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: redis}\ndata:\n  redis.conf: |\n    maxmemory 64mb\n    appendonly yes\n",
		// A password kept with lookup, as grafana's chart keeps its admin password.
		"chart/templates/secret.yaml": `{{- $old := lookup "v1" "Secret" .Release.Namespace "admin" }}
apiVersion: v1
kind: Secret
metadata: {name: admin}
data:
  password: {{ if $old }}{{ index $old.data "password" }}{{ else }}{{ randAlphaNum 16 | b64enc }}{{ end }}
`,
		// A hook Helm deletes once it succeeded, and a helm test hook.
		"chart/templates/hook.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: migrate\n  annotations: {helm.sh/hook: pre-upgrade, helm.sh/hook-delete-policy: hook-succeeded}\ndata: {step: '1'}\n",
		"chart/templates/test.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: test-{{ randAlphaNum 5 | lower }}\n  annotations: {helm.sh/hook: test}\ndata: {probe: '1'}\n",
	}
	r := repo(t, files)
	helmRun(t, r.Dir, ns, "app", false)

	// Right after helm install: nothing to change (the block scalar keeps its newline,
	// the hooks are not additions, the kept password is not re-randomized), and two
	// runs are byte-identical.
	first := drift(t, "diff", "--repo", r.Dir, "--ref", "main")
	if first.code != 0 {
		t.Fatalf("right after helm install: exit %d\n%s\n%s", first.code, first.stdout, first.stderr)
	}
	if second := drift(t, "diff", "--repo", r.Dir, "--ref", "main"); second.stdout != first.stdout {
		t.Errorf("two runs differ:\n%s\n---\n%s", first.stdout, second.stdout)
	}
	if _, err := r.CommitFiles(map[string]string{"chart/values.yaml": "settings: {a: '1'}\n"}, "drop b"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("rm", "-q", "chart/templates/extra.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("drop extra"); err != nil {
		t.Fatal(err)
	}

	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	settings := find(t, rep, "ConfigMap", "settings")
	if o.code != 1 || settings.Category != report.Modify || !strings.Contains(settings.Diff, `-  b: "2"`) {
		t.Fatalf("helm applier: exit %d, settings %s\n%s\n%s", o.code, settings.Category, settings.Diff, o.stderr)
	}
	if extra := find(t, rep, "ConfigMap", "extra"); extra.Category != report.Delete {
		t.Errorf("helm upgrade deletes the dropped template's object; drift says %s", extra.Category)
	}

	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--applier", "kubectl-server-side")
	if s := find(t, rep, "ConfigMap", "settings"); !hasWarning(s, "applier-mismatch", "managed by helm, the field manager of helm") {
		t.Errorf("the default applier on a Helm release: no applier-mismatch warning: %v", s.Warnings)
	}

	helmRun(t, r.Dir, ns, "app", true)
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 0 {
		t.Fatalf("right after helm upgrade: exit %d\n%s", o.code, o.stdout)
	}
	_ = rep
}
