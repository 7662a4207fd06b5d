package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

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

// TestPullRequestSplitsItsChangesFromDrift: the base has one drifted object, the head
// changes another; each lands in its own story.
func TestPullRequestSplitsItsChangesFromDrift(t *testing.T) {
	ns := namespace(t)
	cm := func(name, v string) string {
		return sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: NS}\ndata: {v: \""+v+"\"}\n", ns)
	}
	apply(t, "kubectl", cm("drifted", "1"))
	apply(t, "kubectl", cm("changed", "1"))
	edit(t, cmGVR, ns, "drifted", `{"data":{"v":"by-hand"}}`)
	r := repo(t, map[string]string{"drifted.yaml": cm("drifted", "1"), "changed.yaml": cm("changed", "1")})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"changed.yaml": cm("changed", "2"), "new.yaml": cm("new", "1")}, "pr"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base")
	if o.code != 1 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	got := categories(rep)
	if want := map[string]string{"ConfigMap/drifted": report.Unchanged, "ConfigMap/changed": report.Modify, "ConfigMap/new": report.Add}; !equalMaps(got, want) {
		t.Errorf("the pull request's story: %v, want %v", got, want)
	}
	if c := find(t, rep, "ConfigMap", "changed"); c.Story != "change" || !strings.Contains(c.Diff, `-  v: "1"`) || !strings.Contains(c.Diff, `+  v: "2"`) {
		t.Errorf("changed: %q\n%s", c.Story, c.Diff)
	}
	drifts := rep.Targets[0].Drift
	if len(drifts) != 1 || drifts[0].Name != "drifted" || drifts[0].Story != "drift" || drifts[0].Category != report.Modify ||
		!strings.Contains(drifts[0].Diff, "-  v: by-hand") || !strings.Contains(drifts[0].Diff, `+  v: "1"`) {
		t.Fatalf("drift story: %+v", drifts)
	}
	// Each story's diffs are headed by what they compare.
	if c := find(t, rep, "ConfigMap", "changed"); !strings.HasPrefix(c.Diff, "--- base/v1.ConfigMap."+ns+".changed\n+++ head/v1.ConfigMap."+ns+".changed\n") {
		t.Errorf("the change's diff headers:\n%s", c.Diff)
	}
	if !strings.HasPrefix(drifts[0].Diff, "--- live/v1.ConfigMap."+ns+".drifted\n+++ base/v1.ConfigMap."+ns+".drifted\n") {
		t.Errorf("the drift's diff headers:\n%s", drifts[0].Diff)
	}
	text := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base").stdout
	if !strings.Contains(text, "Drift already in the cluster, not made by this change (1):") {
		t.Errorf("text report:\n%s", text)
	}
	// Without the split, the drifted object is blamed on the pull request.
	rep, _ = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--no-split-drift")
	if c := find(t, rep, "ConfigMap", "drifted"); c.Category != report.Modify || c.Story != "" || len(rep.Targets[0].Drift) != 0 {
		t.Errorf("--no-split-drift: %s %q", c.Category, c.Story)
	}
}

// countingKubeconfig points drift at a proxy in front of the test API server that
// counts dry-run apply PATCHes.
func countingKubeconfig(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	rp, err := env.ReverseProxy()
	if err != nil {
		t.Fatal(err)
	}
	var patches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") == "All" {
			patches.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, &patches
}

// TestSplitSendsOnlyChangedObjectsTwice: objects the pull request leaves alone are
// dry-run once; only the changed one is dry-run for the base too.
func TestSplitSendsOnlyChangedObjectsTwice(t *testing.T) {
	ns := namespace(t)
	cm := func(name, v string) string {
		return sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: NS}\ndata: {v: \""+v+"\"}\n", ns)
	}
	files := map[string]string{}
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("same-%d", i)
		files[name+".yaml"] = cm(name, "1")
	}
	files["changed.yaml"] = cm("changed", "1")
	r := repo(t, files)
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"changed.yaml": cm("changed", "2")}, "pr"); err != nil {
		t.Fatal(err)
	}
	kubeconfig, patches := countingKubeconfig(t)
	if o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--prune=false"); o.code != 1 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	if n := patches.Load(); n != 7 {
		t.Errorf("%d dry-run PATCHes, want 7: 6 for the head, 1 for the one object the base renders differently", n)
	}
}

// TestDetectRefusesDiffOnlyFlags: detect has no base, no cluster of its own and no
// split; each of diff's flags for them is refused before any work, saying why.
func TestDetectRefusesDiffOnlyFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--base", "x"}, {"--base=x"}, {"--cluster", "ephemeral"}, {"--config-from", "head"}, {"--no-split-drift"}} {
		name := strings.SplitN(strings.TrimPrefix(args[0], "--"), "=", 2)[0]
		o := drift(t, append([]string{"detect", "--repo", t.TempDir()}, args...)...)
		if o.code != 2 || o.stdout != "" || !strings.Contains(o.stderr, "drift: error: unknown flag: --"+name+": drift detect checks --ref") ||
			!strings.Contains(o.stderr, "use drift diff for") {
			t.Errorf("detect %v: exit %d\nstdout: %s\nstderr: %s", args, o.code, o.stdout, o.stderr)
		}
	}
	// drift diff still has them.
	if o := drift(t, "diff", "--repo", t.TempDir(), "--base", "x", "--config-from", "sideways"); o.code != 2 || !strings.Contains(o.stderr, `unknown --config-from "sideways"`) {
		t.Errorf("diff: exit %d\n%s", o.code, o.stderr)
	}
}
