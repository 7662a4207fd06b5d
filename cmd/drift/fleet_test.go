package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/report"
)

// prodToken is the bearer token of the prod cluster Secret: Argo CD's credentials,
// which drift must never show.
const prodToken = "argocd-prod-bearer-token-5f1e0c"

// fleetRepo commits testdata/fleet for namespace ns, with drift.yaml mapping the
// prod cluster to the context beta.
func fleetRepo(t *testing.T, ns string) *gitfixture.Repo {
	t.Helper()
	files := map[string]string{
		"drift.yaml": "discover: true\nclusters:\n  prod: beta\n  https://prod.example.com: beta\n",
	}
	root := filepath.Join("..", "..", "testdata", "fleet")
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = sub(string(data), ns)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r := repo(t, files)
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	return r
}

// clusterSecrets writes Argo CD's cluster Secret for prod into ns of the cluster
// drift runs against (alpha), as argocd cluster add does.
func clusterSecrets(t *testing.T, ns string) {
	t.Helper()
	config := base64.StdEncoding.EncodeToString([]byte(`{"bearerToken": "` + prodToken + `", "tlsClientConfig": {"insecure": false}}`))
	apply(t, "kubectl", sub(`apiVersion: v1
kind: Secret
metadata:
  name: cluster-prod
  namespace: NS
  labels: {argocd.argoproj.io/secret-type: cluster, env: prod}
data:
  name: `+base64.StdEncoding.EncodeToString([]byte("prod"))+`
  server: `+base64.StdEncoding.EncodeToString([]byte("https://prod.example.com"))+`
  config: `+config+`
`, ns))
}

// TestAFleetIsPreviewedOnEveryCluster is a fleet as platform teams write it, previewed
// against the live cluster: every add-on on every cluster (a matrix of git
// directories and the clusters Argo CD knows, read from the cluster's Secrets), a
// guestbook per config.json under cluster-config/ (a git files generator with **),
// a web app with per-cluster overrides (a merge by server). Each Application is
// previewed on its cluster's context, and the cluster Secret's token is nowhere.
func TestAFleetIsPreviewedOnEveryCluster(t *testing.T) {
	kubeconfig, _ := twoContexts(t)
	ns := namespace(t)
	clusterSecrets(t, ns)
	r := fleetRepo(t, ns)
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "-o", "json"}
	o := driftWith(t, kubeconfig, args...)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	rep := decodeReport(t, o)
	contexts := map[string]string{}
	for _, tg := range rep.Targets {
		if tg.Skipped == "" {
			contexts[strings.TrimPrefix(tg.Name, "Application/"+ns+"/")] = tg.Context
		}
	}
	want := map[string]string{
		"logging-in-cluster": "", "logging-prod": "beta", "metrics-in-cluster": "", "metrics-prod": "beta",
		"guestbook-in-cluster": "", "guestbook-prod": "beta", "web-in-cluster": "", "web-prod": "beta",
	}
	for name, ctx := range want {
		if got, ok := contexts[name]; !ok || got != ctx {
			t.Errorf("Application %s: previewed %v on context %q, want %q", name, ok, got, ctx)
		}
	}
	if len(contexts) != len(want) {
		t.Errorf("previewed targets %v, want %v", contexts, want)
	}
	web := targetNamed(rep, "Application/"+ns+"/web-prod")
	if web == nil || !slices.ContainsFunc(web.Objects, func(o report.Object) bool {
		return o.Kind == "Deployment" && strings.Contains(o.Diff, "replicas: 3")
	}) {
		t.Errorf("web-prod does not take the merge's override replicas 3: %+v", web)
	}
	for _, out := range []outcome{o, driftWith(t, kubeconfig, append(args[:len(args)-2], "-o", "markdown")...), driftWith(t, kubeconfig, args[:len(args)-2]...)} {
		if strings.Contains(out.stdout+out.stderr, prodToken) || strings.Contains(out.stdout+out.stderr, base64.StdEncoding.EncodeToString([]byte(prodToken))) {
			t.Errorf("the cluster Secret's token is in the output")
		}
	}

	// drift targets contacts no cluster: the clusters generators are skipped, saying
	// why; the git files generator is expanded.
	o = runDrift("targets", "--repo", r.Dir, "--ref", "main")
	if !strings.Contains(o.stdout, "guestbook-prod") || !strings.Contains(o.stdout, "reads Argo CD's cluster Secrets") {
		t.Errorf("drift targets:\n%s\n%s", o.stdout, o.stderr)
	}
}
