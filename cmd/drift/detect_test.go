package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/github/githubtest"
	"github.com/drift-gitops/drift/internal/report"
)

// edit changes a live object as kubectl edit does (a merge patch as kubectl-edit).
func edit(t *testing.T, gvr schema.GroupVersionResource, ns, name, patch string) {
	t.Helper()
	_, err := dynamic.NewForConfigOrDie(env.Config).Resource(gvr).Namespace(ns).
		Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	if err != nil {
		t.Fatal(err)
	}
}

func driftScene(t *testing.T) (ns string, files map[string]string) {
	ns = namespace(t)
	files = map[string]string{
		"web.yaml":   sub("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: NS}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: web:1}]}\n", ns),
		"cm.yaml":    sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS}\ndata: {color: blue}\n", ns),
		"owned.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned, namespace: NS}\ndata: {k: v}\n", ns),
		"calm.yaml":  sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: calm, namespace: NS}\ndata: {k: v}\n", ns),
	}
	for _, doc := range files {
		apply(t, "kubectl", doc)
	}
	return ns, files
}

func TestDriftDetectReportsEditsAndNothingAfterReapplying(t *testing.T) {
	ns, files := driftScene(t)
	r := repo(t, files)
	if rep, o := driftJSON(t, "detect", "--repo", r.Dir); o.code != 0 || rep.Kind != "drift" || rep.Ref != "HEAD" {
		t.Fatalf("in sync: exit %d kind %q ref %q\n%s", o.code, rep.Kind, rep.Ref, o.stderr)
	}
	deploys := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	edit(t, deploys, ns, "web", `{"spec":{"replicas":5}}`)
	edit(t, cmGVR, ns, "settings", `{"data":{"color":"red"}}`)
	edit(t, cmGVR, ns, "calm", `{"metadata":{"labels":{"touched":"by-hand"}}}`)
	if err := dynamic.NewForConfigOrDie(env.Config).Resource(cmGVR).Namespace(ns).Delete(context.Background(), "owned", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "detect", "--repo", r.Dir)
	want := map[string]string{"Deployment/web": report.Modify, "ConfigMap/settings": report.Modify, "ConfigMap/owned": report.Add, "ConfigMap/calm": report.Unchanged}
	if got := categories(rep); o.code != 1 || !equalMaps(got, want) {
		t.Fatalf("exit %d: %v, want %v", o.code, got, want)
	}
	if w := find(t, rep, "Deployment", "web"); !strings.Contains(w.Diff, "-  replicas: 5") || !strings.Contains(w.Diff, "+  replicas: 2") {
		t.Errorf("web:\n%s", w.Diff)
	}
	text := drift(t, "detect", "--repo", r.Dir).stdout
	if !strings.HasPrefix(text, "drift: drift check of commit") {
		t.Errorf("text report: %s", text[:80])
	}
	// Applying the repository again removes the drift.
	for _, doc := range files {
		apply(t, "kubectl", doc)
	}
	if rep, o := driftJSON(t, "detect", "--repo", r.Dir); o.code != 0 || rep.Summary.Changes() != 0 {
		t.Fatalf("after re-applying: exit %d %+v", o.code, rep.Summary)
	}
}

func TestDriftIssueLifecycle(t *testing.T) {
	srv := githubtest.New(ghToken)
	defer srv.Close()
	actionsEnv(t, srv, 0)
	t.Setenv("GITHUB_EVENT_PATH", "")
	ns, files := driftScene(t)
	r := repo(t, files)
	run := func() string {
		t.Helper()
		o := drift(t, "detect", "--repo", r.Dir, "--github-issue")
		if o.code == 2 {
			t.Fatalf("exit 2\n%s", o.stderr)
		}
		return o.stderr
	}
	if out := run(); !strings.Contains(out, "nothing to do") || srv.Writes != 0 || len(srv.Issues) != 0 {
		t.Fatalf("no drift, yet: %s (writes %d)", out, srv.Writes)
	}
	edit(t, cmGVR, ns, "settings", `{"data":{"color":"red"}}`)
	if out := run(); !strings.Contains(out, "opened issue #1") || srv.Issues[1] == nil || !srv.Labels["drift"] {
		t.Fatalf("open: %s", out)
	}
	if is := srv.Issues[1]; is.State != "open" || !strings.Contains(is.Body, "drift detected: 1 to modify") || len(is.Labels) != 1 {
		t.Fatalf("issue = %+v", is)
	}
	writes := srv.Writes
	if out := run(); !strings.Contains(out, "up to date") || srv.Writes != writes {
		t.Fatalf("unchanged drift wrote: %s (%d writes)", out, srv.Writes-writes)
	}
	edit(t, cmGVR, ns, "calm", `{"data":{"k":"changed"}}`)
	if out := run(); !strings.Contains(out, "updated issue #1") || !strings.Contains(srv.Issues[1].Body, "2 to modify") {
		t.Fatalf("update: %s", out)
	}
	for _, doc := range files {
		apply(t, "kubectl", doc)
	}
	if out := run(); !strings.Contains(out, "closed issue #1") || srv.Issues[1].State != "closed" {
		t.Fatalf("close: %s", out)
	}
	if c := srv.Comments(1); len(c) != 1 || !strings.Contains(c[0].Body, "matches the repository again") {
		t.Errorf("closing comment: %+v", c)
	}
	edit(t, cmGVR, ns, "settings", `{"data":{"color":"green"}}`)
	if out := run(); !strings.Contains(out, "reopened issue #1") || srv.Issues[1].State != "open" || len(srv.Issues) != 1 {
		t.Fatalf("reopen: %s, %d issues", out, len(srv.Issues))
	}
}
