package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/testenv"
)

// A second API server, started by the first test that needs two clusters.
var (
	secondOnce sync.Once
	second     *testenv.Env
	secondErr  error
)

func secondServer(t *testing.T) *testenv.Env {
	t.Helper()
	secondOnce.Do(func() { second, secondErr = testenv.Start() })
	if secondErr != nil {
		t.Fatal(secondErr)
	}
	return second
}

func stopSecond() {
	if second != nil {
		_ = second.Stop()
	}
}

// twoContexts writes a kubeconfig with the contexts alpha (the shared test server)
// and beta (a second server); alpha is current.
func twoContexts(t *testing.T) (string, *testenv.Env) {
	t.Helper()
	beta := secondServer(t)
	merged := clientcmdapi.NewConfig()
	for name, path := range map[string]string{"alpha": env.Kubeconfig, "beta": beta.Kubeconfig} {
		c, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cur := c.Contexts[c.CurrentContext]
		merged.Clusters[name] = c.Clusters[cur.Cluster]
		merged.AuthInfos[name] = c.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	merged.CurrentContext = "alpha"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		t.Fatal(err)
	}
	return path, beta
}

// driftWith runs drift with a given kubeconfig (drift() always passes the shared one).
func driftWith(t *testing.T, kubeconfig string, args ...string) outcome {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--kubeconfig", kubeconfig)
	code := run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return outcome{code: code, stdout: out.String(), stderr: errOut.String()}
}

// platformRepo commits testdata/platform.
func platformRepo(t *testing.T) *gitfixture.Repo {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitTree(filepath.Join("..", "..", "testdata", "platform"), "platform"); err != nil {
		t.Fatal(err)
	}
	return r
}

// seedPlatform puts the two clusters in the state the platform golden expects: some
// objects as flux applied them before this change, an autoscaler owning replicas.
func seedPlatform(t *testing.T, beta *testenv.Env) {
	t.Helper()
	applyTo(t, env.Config, "flux", `apiVersion: v1
kind: Namespace
metadata:
  name: shop-staging
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: compute
  namespace: shop-staging
spec:
  hard:
    pods: "10"
---
apiVersion: v1
kind: Service
metadata:
  name: shop
  namespace: shop-staging
  labels:
    app.kubernetes.io/name: shop
spec:
  selector:
    app: shop
  ports:
    - port: 80
      targetPort: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  namespace: shop-staging
  labels:
    app.kubernetes.io/name: shop
spec:
  replicas: 1
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      containers:
        - name: shop
          image: registry.example/shop:1.0.0
`)
	// The autoscaler took replicas over: drift.yaml ignores what hpa-controller owns.
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("shop-staging").
		Patch(context.Background(), "shop", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "hpa-controller"})
	if err != nil {
		t.Fatal(err)
	}
	applyTo(t, beta.Config, "flux", `apiVersion: v1
kind: Namespace
metadata:
  name: shop-prod
---
apiVersion: v1
kind: Namespace
metadata:
  name: web
---
apiVersion: v1
kind: Secret
metadata:
  name: web-settings
  namespace: web
stringData:
  password: lookup-must-not-see-this
`)
	// The chart's CRD is live, so .Capabilities knows example.com/v1 Widget.
	crd, err := os.ReadFile(filepath.Join("..", "..", "testdata", "platform", "charts", "web", "crds", "widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	applyTo(t, beta.Config, "helm", string(crd))
	applyTo(t, beta.Config, "flux", `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-settings
  namespace: web
data:
  release: web
  namespace: web
  seenBefore: "no"
`)
}

func TestPlatformAcrossTwoClusters(t *testing.T) {
	kubeconfig, beta := twoContexts(t)
	seedPlatform(t, beta)
	r := platformRepo(t)

	for _, format := range []string{"text", "markdown"} {
		o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", "main", "-o", format)
		if o.code != 1 {
			t.Fatalf("%s: exit %d\n%s\n%s", format, o.code, o.stdout, o.stderr)
		}
		golden.Check(t, "platform."+map[string]string{"text": "txt", "markdown": "md"}[format], []byte(sanitize(o.stdout)))
	}

	o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", "main", "-o", "json")
	rep := decodeReport(t, o)
	if !rep.Complete || o.code != 1 {
		t.Fatalf("exit %d, complete %v\n%s", o.code, rep.Complete, o.stderr)
	}
	targets := map[string]report.Target{}
	for _, tg := range rep.Targets {
		targets[tg.Name] = tg
	}
	want := map[string]struct{ context, renderer string }{
		"platform": {"alpha", "plain"}, "shop-staging": {"alpha", "kustomize"},
		"shop-prod": {"beta", "kustomize"}, "web": {"beta", "helm"},
	}
	for name, w := range want {
		tg, ok := targets[name]
		if !ok || tg.Context != w.context || tg.Renderer != w.renderer {
			t.Errorf("target %s = %+v, want context %s renderer %s", name, tg, w.context, w.renderer)
		}
	}
	cat := func(target, kind, ns, name string) report.Object {
		t.Helper()
		for _, ob := range targets[target].Objects {
			if ob.Kind == kind && ob.Namespace == ns && strings.HasPrefix(ob.Name, name) {
				return ob
			}
		}
		t.Fatalf("%s: no %s %s/%s", target, kind, ns, name)
		return report.Object{}
	}
	// alpha: the quota grows; the staging Deployment changes image but not replicas
	// (hpa-controller owns them); the Service is as applied; generated ConfigMaps are new.
	if o := cat("platform", "ResourceQuota", "shop-staging", "compute"); o.Category != report.Modify {
		t.Errorf("quota: %s", o.Category)
	}
	dep := cat("shop-staging", "Deployment", "shop-staging", "shop")
	if dep.Category != report.Modify || !strings.Contains(dep.Diff, "+        image: registry.example/shop:1.1.0-rc.1") || strings.Contains(dep.Diff, "replicas") {
		t.Errorf("staging deployment: %s\n%s", dep.Category, dep.Diff)
	}
	if dep.Source != "apps/shop/base/deployment.yaml" {
		t.Errorf("staging deployment source %s", dep.Source)
	}
	if o := cat("shop-staging", "Service", "shop-staging", "shop"); o.Category != report.Unchanged {
		t.Errorf("staging service: %s\n%s", o.Category, o.Diff)
	}
	creds := cat("shop-staging", "ConfigMap", "shop-staging", "shop-credentials-")
	if creds.Category != report.Add || strings.Contains(creds.Diff, "base-token-1234") || !strings.Contains(creds.Diff, "API_TOKEN: '***'") {
		t.Errorf("credentials not masked:\n%s", creds.Diff)
	}
	// beta: the same overlay base lands in shop-prod; the chart's objects in web.
	if o := cat("shop-prod", "Deployment", "shop-prod", "shop"); o.Category != report.Add {
		t.Errorf("prod deployment: %s %s", o.Category, o.Error)
	}
	settings := cat("web", "ConfigMap", "web", "web-settings")
	if settings.Category != report.Modify || !strings.Contains(settings.Diff, "+  kubeVersion: v1.36.3") || !strings.Contains(settings.Diff, "+  widgets: served") {
		t.Errorf("web-settings (capabilities from beta's discovery):\n%s", settings.Diff)
	}
	if strings.Contains(o.stdout, "lookup-must-not-see-this") {
		t.Errorf("lookup read a Secret from the cluster")
	}
	hook := cat("web", "Job", "web", "web-migrate")
	if hook.Category != report.Add || len(hook.Warnings) == 0 || hook.Warnings[0].Reason != "helm-hook" {
		t.Errorf("hook: %s %v", hook.Category, hook.Warnings)
	}
	if cache := cat("web", "Deployment", "web", "web-cache"); cache.Source != "charts/web/charts/cache/templates/deployment.yaml" {
		t.Errorf("subchart source %s", cache.Source)
	}
	// --dump keeps each target's files apart: the same file name can live in two clusters.
	dump := t.TempDir()
	if o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", "main", "--dump", dump); o.code != 1 {
		t.Fatalf("--dump: exit %d\n%s", o.code, o.stderr)
	}
	for _, f := range []string{"merged/web/apps.v1.Deployment.web.web", "merged/shop-prod/apps.v1.Deployment.shop-prod.shop", "live/shop-staging/apps.v1.Deployment.shop-staging.shop"} {
		if _, err := os.Stat(filepath.Join(dump, f)); err != nil {
			t.Errorf("--dump: %v", err)
		}
	}
	// Nothing was applied for real: the prod Deployment is still absent from beta.
	o2 := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", "main", "--target", "shop-prod", "-o", "json")
	if rep2 := decodeReport(t, o2); cat2(rep2, "shop-prod", "Deployment") != report.Add {
		t.Errorf("a dry run changed the cluster")
	}
}

func cat2(rep *report.Report, target, kind string) string {
	for _, tg := range rep.Targets {
		for _, o := range tg.Objects {
			if tg.Name == target && o.Kind == kind {
				return o.Category
			}
		}
	}
	return ""
}

func decodeReport(t *testing.T, o outcome) *report.Report {
	t.Helper()
	rep := &report.Report{}
	if err := json.Unmarshal([]byte(o.stdout), rep); err != nil {
		t.Fatalf("no JSON report (exit %d): %v\n%s\n%s", o.code, err, o.stdout, o.stderr)
	}
	return rep
}

func skippedTargets(rep *report.Report) map[string]string {
	out := map[string]string{}
	for _, tg := range rep.Targets {
		if tg.Skipped != "" {
			out[tg.Name] = tg.Skipped
		}
	}
	return out
}

func TestBaseSelectsOnlyTargetsWhoseInputsChanged(t *testing.T) {
	kubeconfig, beta := twoContexts(t)
	seedPlatform(t, beta)
	r := platformRepo(t)
	first, _ := r.Git("rev-parse", "HEAD")
	first = strings.TrimSpace(first)
	commit := func(files map[string]string) string {
		t.Helper()
		c, err := r.CommitFiles(files, "change")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := filepath.Join("..", "..", "testdata", "platform")
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(base, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	prodOnly := commit(map[string]string{"apps/shop/overlays/prod/replicas.yaml": strings.Replace(read("apps/shop/overlays/prod/replicas.yaml"), "replicas: 3", "replicas: 4", 1)})
	sharedBase := commit(map[string]string{"apps/shop/base/shop.properties": "currency=USD\n"})
	values := commit(map[string]string{"charts/web/values-prod.yaml": "replicaCount: 3\n"})
	entry := commit(map[string]string{"drift.yaml": strings.Replace(read("drift.yaml"), "    context: alpha\n  - name: shop-staging", "    context: alpha\n    namespace: platform\n  - name: shop-staging", 1)})

	cases := []struct {
		ref, base string
		diffed    []string
	}{
		{prodOnly, first, []string{"shop-prod"}},
		{sharedBase, prodOnly, []string{"shop-prod", "shop-staging"}},
		{values, sharedBase, []string{"web"}},
		{entry, values, []string{"platform"}},
	}
	for _, c := range cases {
		o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", c.ref, "--base", c.base, "-o", "json")
		rep := decodeReport(t, o)
		skipped := skippedTargets(rep)
		var diffed []string
		for _, tg := range rep.Targets {
			if tg.Skipped == "" {
				diffed = append(diffed, tg.Name)
			}
		}
		if strings.Join(diffed, ",") != strings.Join(c.diffed, ",") || len(skipped)+len(diffed) != 4 {
			t.Errorf("ref %s base %s: diffed %v, want %v; skipped %v\n%s", c.ref[:7], c.base[:7], diffed, c.diffed, skipped, o.stderr)
		}
		for name, why := range skipped {
			if !strings.Contains(why, "inputs are unchanged since commit "+c.base[:12]) {
				t.Errorf("%s skipped with %q", name, why)
			}
		}
	}
	// The text report says which targets were skipped and why.
	o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", values, "--base", sharedBase)
	if !strings.Contains(o.stdout, "Skipped 3 targets:\n  platform: its inputs are unchanged since commit "+sharedBase[:12]) {
		t.Errorf("text report:\n%s", o.stdout)
	}
}

func TestTargetFlagSelectsByNameAndGlob(t *testing.T) {
	kubeconfig, beta := twoContexts(t)
	seedPlatform(t, beta)
	r := platformRepo(t)
	rep := decodeReport(t, driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--target", "shop-*", "-o", "json"))
	if s := skippedTargets(rep); len(s) != 2 || s["web"] != "not selected with --target" || s["platform"] == "" {
		t.Errorf("skipped = %v", s)
	}
	o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--target", "nope")
	if o.code != 2 || !strings.Contains(o.stderr, `--target "nope" names no target; the targets are: platform, shop-prod, shop-staging, web`) {
		t.Errorf("exit %d\n%s", o.code, o.stderr)
	}
}

// TestEphemeralServersPerCluster runs the platform repository with no cluster: one
// ephemeral server per context, each loaded with its targets' base. The shop-staging
// namespace comes from the platform target, which --base skips: it is loaded all the
// same.
func TestEphemeralServersPerCluster(t *testing.T) {
	r := platformRepo(t)
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	svc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "platform", "apps", "shop", "base", "service.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"apps/shop/base/service.yaml": strings.Replace(string(svc), "targetPort: 8080", "targetPort: 9090", 1)}, "new port"); err != nil {
		t.Fatal(err)
	}
	o := drift(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main", "-o", "json")
	rep := decodeReport(t, o)
	if o.code != 1 || !rep.Complete || rep.Cluster != "ephemeral" {
		t.Fatalf("exit %d complete %v\n%s", o.code, rep.Complete, o.stderr)
	}
	if s := skippedTargets(rep); len(s) != 2 || s["platform"] == "" || s["web"] == "" {
		t.Errorf("skipped = %v", s)
	}
	for _, name := range []string{"shop-staging", "shop-prod"} {
		if c := cat2(rep, name, "Service"); c != report.Modify {
			t.Errorf("%s Service: %s", name, c)
		}
		if c := cat2(rep, name, "Deployment"); c != report.Unchanged {
			t.Errorf("%s Deployment: %s", name, c)
		}
	}
	if rep.Summary.Modify != 2 || rep.Summary.Error != 0 || strings.Contains(o.stderr, "could not load") {
		t.Errorf("summary %+v\n%s", rep.Summary, o.stderr)
	}
	// The Deployments the change leaves as they are were neither loaded nor sent,
	// and stderr says how many objects were left so (never more than are unchanged).
	m := regexp.MustCompile(`drift: ephemeral server: (\d+) objects? the change leaves as the base has (?:them|it) (?:are|is) ` + regexp.QuoteMeta(leftAsIsSays)).FindStringSubmatch(o.stderr)
	if left, _ := strconv.Atoi(append(m, "", "")[1]); left < 2 || left > rep.Summary.Unchanged {
		t.Errorf("stderr does not say that the unchanged objects (%d) were left as they are:\n%s", rep.Summary.Unchanged, o.stderr)
	}
	if all := drift(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main", "--ephemeral-load-all"); strings.Contains(all.stderr, leftAsIsSays) {
		t.Errorf("--ephemeral-load-all left objects unsent:\n%s", all.stderr)
	}
}

func TestObjectInTwoTargetsOfOneClusterIsWarned(t *testing.T) {
	ns := namespace(t)
	cm := sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: NS}\ndata: {k: v}\n", ns)
	r := repo(t, map[string]string{
		"drift.yaml": "targets:\n  - {name: a, path: a}\n  - {name: b, path: b}\n",
		"a/cm.yaml":  cm,
		"b/cm.yaml":  strings.Replace(cm, "k: v", "k: w", 1),
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 1 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	for _, tg := range rep.Targets {
		other := map[string]string{"a": "b", "b": "a"}[tg.Name]
		w := tg.Objects[0].Warnings
		if len(w) != 1 || w[0].Reason != "duplicate" || !strings.Contains(w[0].Message, "target "+other+" also deploys this object") {
			t.Errorf("target %s warnings = %v", tg.Name, w)
		}
	}
}

func TestUnreachableClusterFailsOnlyItsTargets(t *testing.T) {
	kubeconfig, beta := twoContexts(t)
	seedPlatform(t, beta)
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters["beta"].Server = "https://127.0.0.1:1" // nothing listens there
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	r := platformRepo(t)
	o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", "main", "-o", "json")
	rep := decodeReport(t, o)
	if o.code != 2 || rep.Complete {
		t.Fatalf("exit %d complete %v", o.code, rep.Complete)
	}
	for _, tg := range rep.Targets {
		switch tg.Name {
		case "shop-prod", "web":
			if len(tg.Objects) != 1 || tg.Objects[0].ErrorReason != "unavailable" || !strings.Contains(tg.Objects[0].Error, "not previewed: context beta: cannot reach the API server at https://127.0.0.1:1") {
				t.Errorf("%s: %+v", tg.Name, tg.Objects)
			}
		default:
			if len(tg.Objects) == 0 || tg.Objects[0].Category == report.Error {
				t.Errorf("%s was not previewed: %+v", tg.Name, tg.Objects)
			}
		}
	}
}
