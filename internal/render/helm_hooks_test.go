package render

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/drift-gitops/drift/internal/reason"
)

func hookChart() fstest.MapFS {
	hook := func(name, events, policy string) string {
		p := ""
		if policy != "" {
			p = "\n    helm.sh/hook-delete-policy: " + policy
		}
		return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n  annotations:\n    helm.sh/hook: " + events + p + "\nspec: {}\n"
	}
	return fstest.MapFS{
		"app/Chart.yaml":                file(chartYAML),
		"app/templates/cm.yaml":         file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"),
		"app/templates/migrate.yaml":    file(hook("migrate", "pre-upgrade,pre-install", "before-hook-creation")),
		"app/templates/default.yaml":    file(hook("default-policy", "post-upgrade", "")),
		"app/templates/once.yaml":       file(hook("once", "pre-upgrade", "before-hook-creation,hook-succeeded")),
		"app/templates/tests/test.yaml": file(strings.Replace(hook("app-test-x7k2", "test", ""), "kind: Job", "kind: Pod", 1)),
		"app/templates/cleanup.yaml":    file(hook("cleanup", "pre-delete", "")),
	}
}

func TestHelmHooksArePreviewedAsHelmUpgradeRunsThem(t *testing.T) {
	t.Parallel()
	res := Helm(hookChart(), "app", HelmOptions{ReleaseName: "r"})
	if len(res.Failures) > 0 {
		t.Fatal(res.Failures)
	}
	objs := byDisplay(res)
	for _, kept := range []string{"v1 ConfigMap cm", "batch/v1 Job migrate", "batch/v1 Job default-policy"} {
		if _, ok := objs[kept]; !ok {
			t.Errorf("%s is not previewed: %v", kept, keys(objs))
		}
	}
	if len(objs) != 3 {
		t.Errorf("objects = %v: test hooks, hooks deleted on success and delete hooks are left out", keys(objs))
	}
	if n := objs["batch/v1 Job migrate"].Notes; len(n) != 1 || n[0].Reason != reason.HelmHook {
		t.Errorf("kept hook notes = %v", n)
	}
	want := []string{
		"Helm hook Job (app/templates/cleanup.yaml, pre-delete) left out: it runs only when the release is deleted or rolled back",
		"Helm hook Job (app/templates/once.yaml, pre-upgrade) left out: Helm runs it at these events and deletes it once it succeeds (hook-succeeded)",
		"Helm hook Pod (app/templates/tests/test.yaml, test) left out: it runs only under `helm test`",
	}
	if len(res.Notes) != len(want) {
		t.Fatalf("notes = %q", res.Notes)
	}
	for i, w := range want {
		if !strings.HasPrefix(res.Notes[i], w) {
			t.Errorf("note %d = %q, want it to start with %q", i, res.Notes[i], w)
		}
	}
}

func TestHelmKeepsTheFinalNewlineOfABlockEndingADocument(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"app/Chart.yaml":        file(chartYAML),
		"app/templates/cm.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n  a.conf: |\n    x\n    y\n\n\n"),
	}
	res := Helm(fsys, "app", HelmOptions{ReleaseName: "r"})
	if len(res.Objects) != 1 {
		t.Fatal(res.Failures)
	}
	// Helm trims the document, then writes it with one newline: "|" keeps that one.
	if got := res.Objects[0].Get().Object["data"].(map[string]any)["a.conf"]; got != "x\ny\n" {
		t.Errorf("a.conf = %q, want %q as helm applies it", got, "x\ny\n")
	}
}
