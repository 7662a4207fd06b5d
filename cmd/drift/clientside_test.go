package main

import (
	"os/exec"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/report"
)

// createClientSide creates an object with kubectl apply (client-side): a create with
// the last-applied-configuration annotation, as kubectl-client-side-apply.
func createClientSide(t *testing.T, _ schema.GroupVersionResource, doc string) {
	t.Helper()
	// The real kubectl binary: a hand-written last-applied annotation once hid that
	// kubectl writes "annotations":{} into it.
	cmd := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(doc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// TestFieldRemovedFromAnObjectAppliedClientSide: a ConfigMap applied client-side with
// keys a and b; the repository drops b. Client mode predicts the removal through the
// three-way patch; server mode predicts it through the client-side-apply migration
// server-side appliers perform, and says so; neither calls the object unchanged.
func TestFieldRemovedFromAnObjectAppliedClientSide(t *testing.T) {
	ns := namespace(t)
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	createClientSide(t, cm, sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS}\ndata: {a: '1', b: '2'}\n", ns))
	r := repo(t, map[string]string{"cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS}\ndata: {a: '1'}\n", ns)})

	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--apply-mode", "client")
	client := find(t, rep, "ConfigMap", "settings")
	if o.code != 1 || client.Category != report.Modify || !strings.Contains(client.Diff, "-  b: \"2\"") || strings.Contains(client.Diff, "+  b:") {
		t.Fatalf("client mode: exit %d %s\n%s\n%s", o.code, client.Category, client.Diff, o.stderr)
	}
	if !strings.Contains(client.Diff, `+      {"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap"`) {
		t.Errorf("client mode does not update the annotation as kubectl does:\n%s", client.Diff)
	}

	for _, manager := range []string{"kubectl", "flux"} {
		rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--field-manager", manager)
		server := find(t, rep, "ConfigMap", "settings")
		if o.code != 1 || server.Category != report.Modify || !strings.Contains(server.Diff, "-  b: \"2\"") ||
			!hasWarning(server, "client-side-apply-migration", "moves those fields to "+manager) || !hasWarning(server, "client-side-apply-migration", "deleted: .data.b") {
			t.Errorf("server mode (%s): exit %d %s %v\n%s", manager, o.code, server.Category, server.Warnings, server.Diff)
		}
		if hasWarning(server, "conflict", "") {
			t.Errorf("server mode (%s): a phantom conflict: %v", manager, server.Warnings)
		}
	}
}

// TestClientModeOnAnUnchangedObject: applied client-side and unchanged in the
// repository, client mode finds nothing to change.
func TestClientModeOnAnUnchangedObject(t *testing.T) {
	ns := namespace(t)
	doc := sub("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: NS}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: web:1}]}\n", ns)
	createClientSide(t, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, doc)
	r := repo(t, map[string]string{"web.yaml": doc})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--apply-mode", "client")
	if web := find(t, rep, "Deployment", "web"); o.code != 0 || web.Category != report.Unchanged {
		t.Fatalf("exit %d %s\n%s", o.code, web.Category, web.Diff)
	}
	changed := strings.Replace(doc, "web:1", "web:2", 1)
	if _, err := r.CommitFiles(map[string]string{"web.yaml": changed}, "bump"); err != nil {
		t.Fatal(err)
	}
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--apply-mode", "client")
	web := find(t, rep, "Deployment", "web")
	if o.code != 1 || web.Category != report.Modify || !strings.Contains(web.Diff, "+      - image: web:2") {
		t.Fatalf("exit %d %s\n%s", o.code, web.Category, web.Diff)
	}
}
