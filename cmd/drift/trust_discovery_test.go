package main

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

// exfilChart copies the live Secret NS/db's password, and every Secret of NS, into a
// ConfigMap, through Helm's lookup.
var exfilChart = map[string]string{
	"charts/exfil/Chart.yaml": "apiVersion: v2\nname: exfil\nversion: 1.0.0\n",
	"charts/exfil/templates/cm.yaml": `{{- $s := lookup "v1" "Secret" "NS" "db" }}
{{- $all := lookup "v1" "Secret" "NS" "" }}
apiVersion: v1
kind: ConfigMap
metadata: {name: exfil, namespace: NS}
data:
  stolen: {{ (($s).data).password | default "" | b64dec | quote }}
  all: {{ $all | toJson | b64enc | quote }}
`,
}

// innocentChart is the chart the base deploys under the same name.
var innocentChart = map[string]string{
	"charts/exfil/Chart.yaml":        "apiVersion: v2\nname: exfil\nversion: 1.0.0\n",
	"charts/exfil/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: exfil, namespace: NS}\ndata: {stolen: nothing}\n",
}

const (
	fluxRemote = "https://github.com/example/fleet.git"
	livePass   = "hunter2-live-password"
)

// fluxSource is the repository's own GitRepository, following main.
const fluxSource = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 1m
  url: ` + fluxRemote + `
  ref: {branch: main}
`

// exfilRelease is a HelmRelease of charts/exfil from the repository.
const exfilRelease = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: exfil, namespace: NS}
spec:
  interval: 1m
  chart:
    spec:
      chart: ./charts/exfil
      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
`

// liveSecret puts the Secret db into ns, with livePass as its password.
func liveSecret(t *testing.T, ns string) {
	t.Helper()
	apply(t, "kubectl", sub("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: NS}\nstringData: {password: "+livePass+"}\n"+
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: other, namespace: NS}\nstringData: {token: other-live-token-value}\n", ns))
}

// assertNoLiveSecret fails when a live Secret's value, in any plain or base64 form,
// is in what drift wrote.
func assertNoLiveSecret(t *testing.T, what string, outs ...outcome) {
	t.Helper()
	for _, o := range outs {
		for _, v := range []string{livePass, "other-live-token-value"} {
			for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
				if strings.Contains(o.stdout, form) || strings.Contains(o.stderr, form) {
					t.Errorf("%s: a live Secret's value %q is in the output", what, form)
				}
			}
		}
	}
}

// chartFiles is a chart's files for a namespace.
func chartFiles(chart map[string]string, ns string) map[string]string {
	out := map[string]string{}
	for k, v := range chart {
		out[k] = sub(v, ns)
	}
	return out
}

func withFiles(a map[string]string, more ...map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for _, m := range more {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// fluxRepo commits files on main, known by fluxRemote, tags the commit base, then
// commits change on main.
func fluxRepo(t *testing.T, base, change map[string]string) *gitfixture.Repo {
	t.Helper()
	r := repo(t, base)
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(change, "the change"); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAPullRequestCannotTurnOnDiscoveryToReadTheCluster: the base's drift.yaml previews
// with kubectl-server-side and does not discover. A pull request adds discover: true
// and a HelmRelease whose chart copies a live Secret, and every Secret of its
// namespace, into a ConfigMap through lookup. Discovery is the base's to turn on: the
// HelmRelease is not previewed, the report says the change's discover was not used,
// and no Secret value is in any output.
func TestAPullRequestCannotTurnOnDiscoveryToReadTheCluster(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	liveSecret(t, ns)
	base := map[string]string{
		"drift.yaml":  "defaults: {applier: kubectl-server-side}\ntargets:\n  - {name: app, path: app, namespace: " + ns + "}\n",
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: b}\n",
	}
	change := withFiles(chartFiles(exfilChart, ns), map[string]string{
		"drift.yaml":       "discover: true\ndefaults: {applier: kubectl-server-side}\ntargets:\n  - {name: app, path: app, namespace: " + ns + "}\n",
		"flux/source.yaml": fluxSource,
		"flux/exfil.yaml":  sub(exfilRelease, ns),
	})
	r := fluxRepo(t, base, change)
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "--base", "base"}
	rep, o := driftJSON(t, args...)
	if targetNamed(rep, "HelmRelease/"+ns+"/exfil") != nil {
		t.Errorf("the change's HelmRelease was discovered, though the base does not discover")
	}
	if rep.Config == nil || !slices.Contains(rep.Config.NotApplied, "discover") {
		t.Errorf("the report does not say the change's discover: true was not used: %+v", rep.Config)
	}
	text := drift(t, args...)
	md := drift(t, append(args, "-o", "markdown")...)
	assertNoLiveSecret(t, "discover added by the change", o, text, md)
}

// TestAHelmReleaseTheChangeAddsGetsNoLookup: the base discovers (no drift.yaml), and a
// pull request adds the same HelmRelease. Its target is new, so its templates get no
// access to the cluster: lookup finds nothing, the ConfigMap it renders is an
// addition with nothing stolen, and the target says why.
func TestAHelmReleaseTheChangeAddsGetsNoLookup(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	liveSecret(t, ns)
	r := fluxRepo(t, map[string]string{"flux/source.yaml": fluxSource, "README.md": "fleet\n"},
		withFiles(chartFiles(exfilChart, ns), map[string]string{"flux/exfil.yaml": sub(exfilRelease, ns)}))
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "--base", "base"}
	rep, o := driftJSON(t, args...)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	tg := targetNamed(rep, "HelmRelease/"+ns+"/exfil")
	if tg == nil || tg.Applier != "helm" {
		t.Fatalf("the HelmRelease's target: %+v", tg)
	}
	cm := find(t, rep, "ConfigMap", "exfil")
	if cm.Category != "add" || !strings.Contains(cm.Diff, `stolen: ""`) {
		t.Errorf("exfil: %s\n%s", cm.Category, cm.Diff)
	}
	if !slices.ContainsFunc(tg.Notes, func(n string) bool { return strings.Contains(n, "lookup finds nothing") }) {
		t.Errorf("the target does not say lookup was not granted: %q", tg.Notes)
	}
	assertNoLiveSecret(t, "a HelmRelease the change adds", o, drift(t, append(args, "-o", "markdown")...))
}

// TestLookupHandsAPullRequestNoSecretData: the base deploys the HelmRelease with the
// helm applier, so its lookup reads the cluster; the pull request rewrites the chart
// to copy Secrets. On a pull request lookup sees Secrets without their data, and
// says so; only the runner's --lookup-secrets hands the data over, and then the value
// copied as it is is scrubbed from every output.
func TestLookupHandsAPullRequestNoSecretData(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	liveSecret(t, ns)
	base := withFiles(chartFiles(innocentChart, ns), map[string]string{"flux/source.yaml": fluxSource, "flux/exfil.yaml": sub(exfilRelease, ns)})
	r := fluxRepo(t, base, chartFiles(exfilChart, ns))
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "--base", "base"}
	rep, o := driftJSON(t, args...)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	tg := targetNamed(rep, "HelmRelease/"+ns+"/exfil")
	if tg == nil || !slices.ContainsFunc(tg.Notes, func(n string) bool { return strings.Contains(n, "without their data") }) {
		t.Fatalf("the target does not say lookup hid the Secrets' data: %+v", tg)
	}
	if cm := find(t, rep, "ConfigMap", "exfil"); !strings.Contains(cm.Diff, `stolen: ""`) {
		t.Errorf("exfil:\n%s", cm.Diff)
	}
	assertNoLiveSecret(t, "lookup on a pull request", o, drift(t, args...), drift(t, append(args, "-o", "markdown")...))

	opted := append(args, "--lookup-secrets")
	rep, o = driftJSON(t, opted...)
	if cm := find(t, rep, "ConfigMap", "exfil"); !strings.Contains(cm.Diff, "stolen: '***'") {
		t.Errorf("with --lookup-secrets the copied value is not scrubbed:\n%s", cm.Diff)
	}
	for _, out := range []outcome{o, drift(t, opted...), drift(t, append(opted, "-o", "markdown")...)} {
		if strings.Contains(out.stdout, livePass) || strings.Contains(out.stderr, livePass) {
			t.Errorf("with --lookup-secrets the password is in the output")
		}
	}
}

// TestAPathlessEntryOfTheChangeSetsNoContext: the base discovers an Application; the
// pull request adds a drift.yaml entry without a path naming it, with a context the
// base never names. Not one request reaches that context, the Application is
// previewed where the base previews it, and the report says what was not used.
func TestAPathlessEntryOfTheChangeSetsNoContext(t *testing.T) {
	ns := namespace(t)
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Logf("request to the other context: %s %s", r.Method, r.URL)

		hits.Add(1)
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(other.Close)
	kubeconfig := filepath.Join(t.TempDir(), "config")
	kc, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc.Clusters["other"] = &clientcmdapi.Cluster{Server: other.URL}
	kc.AuthInfos["other"] = &clientcmdapi.AuthInfo{Token: "other-context-token"}
	kc.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "other"}
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: guestbook, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + fluxRemote + `, path: guestbook, targetRevision: HEAD}
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
`
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gb}\ndata: {color: COLOR}\n"
	r := fluxRepo(t, map[string]string{
		"drift.yaml":          "discover: true\n",
		"apps/guestbook.yaml": app,
		"guestbook/cm.yaml":   strings.Replace(cm, "COLOR", "blue", 1),
	}, map[string]string{
		"drift.yaml":        "discover: true\ntargets:\n  - {name: Application/guestbook, context: other}\n",
		"guestbook/cm.yaml": strings.Replace(cm, "COLOR", "green", 1),
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--kubeconfig", kubeconfig)
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the context the change named", n)
	}
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	gb := targetNamed(rep, "Application/guestbook")
	if gb == nil || gb.Context != "" || len(gb.Objects) != 1 || gb.Objects[0].Category != "modify" {
		t.Errorf("Application/guestbook: %+v", gb)
	}
	if rep.Config == nil || !slices.ContainsFunc(rep.Config.NotApplied, func(s string) bool { return strings.Contains(s, "Application/guestbook: context") }) {
		t.Errorf("the report does not say the entry's context was not used: %+v", rep.Config)
	}
}

// TestWhatAChangeAddsIsNeverDrift: a pull request adds an Argo CD Application and a
// drift.yaml target for directories the base already holds but never deploys, and an
// Application of a remote chart the base never deploys. Their objects are additions
// of the change (exit 1), never "drift already in the cluster".
func TestWhatAChangeAddsIsNeverDrift(t *testing.T) {
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	srv := chartRepository(t)
	ns := namespace(t)
	app := func(name, source string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  source: ` + source + `
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
`
	}
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: b}\n"
	}
	for _, c := range []struct {
		name         string
		base, change map[string]string
		added        []string
	}{{
		name: "an Application for a directory the base holds",
		base: map[string]string{
			"drift.yaml":  "discover: true\ncharts: {allow: [" + srv.URL() + "]}\n",
			"apps/a.yaml": app("a", "{repoURL: "+fluxRemote+", path: a, targetRevision: HEAD}"),
			"a/cm.yaml":   cm("a"), "b/cm.yaml": cm("b-only-in-git"),
		},
		change: map[string]string{"apps/b.yaml": app("b", "{repoURL: "+fluxRemote+", path: b, targetRevision: HEAD}")},
		added:  []string{"b-only-in-git"},
	}, {
		name: "an Application of a remote chart",
		base: map[string]string{
			"drift.yaml":  "discover: true\ncharts: {allow: [" + srv.URL() + "]}\n",
			"apps/a.yaml": app("a", "{repoURL: "+fluxRemote+", path: a, targetRevision: HEAD}"),
			"a/cm.yaml":   cm("a"),
		},
		change: map[string]string{"apps/web.yaml": app("web", "{repoURL: '"+srv.URL()+"', chart: web, targetRevision: 1.0.0}")},
		added:  []string{"web-settings"},
	}, {
		name: "a drift.yaml target for a directory the base holds",
		base: map[string]string{
			"drift.yaml": "targets:\n  - {name: a, path: a, namespace: " + ns + "}\n",
			"a/cm.yaml":  cm("a"), "c/cm.yaml": cm("c-only-in-git"),
		},
		change: map[string]string{"drift.yaml": "targets:\n  - {name: a, path: a, namespace: " + ns + "}\n  - {name: c, path: c, namespace: " + ns + "}\n"},
		added:  []string{"c-only-in-git"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			r := fluxRepo(t, c.base, c.change)
			rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base")
			if o.code != exitChanges {
				t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
			}
			for _, name := range c.added {
				if got := find(t, rep, "ConfigMap", name); got.Category != "add" {
					t.Errorf("%s: %s, want add", name, got.Category)
				}
			}
			for _, tg := range rep.Targets {
				for _, d := range tg.Drift {
					t.Errorf("%s: %s %s is filed as drift already in the cluster", tg.Name, d.Kind, d.Name)
				}
			}
			if rep.Summary.Add != len(c.added) {
				t.Errorf("summary: %+v, want %d to add", rep.Summary, len(c.added))
			}
		})
	}
}

// TestValuesFromASecretAreScrubbedValueByValue: a HelmRelease's values come from a
// Secret's values.yaml; the chart puts one of them, alone, into a ConfigMap. Each
// value of the document is scrubbed wherever it appears, not only the document whole.
func TestValuesFromASecretAreScrubbedValueByValue(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	const password = "s3cr3t-vf-password"
	values := "db:\n  password: " + password + "\n  port: 5432\n"
	r := repo(t, map[string]string{
		"flux/source.yaml": fluxSource,
		"flux/release.yaml": sub(exfilRelease, ns) + `  valuesFrom:
  - {kind: Secret, name: db-values}
`,
		"flux/values.yaml": sub("apiVersion: v1\nkind: Secret\nmetadata: {name: db-values, namespace: NS}\ndata: {values.yaml: "+
			base64.StdEncoding.EncodeToString([]byte(values))+"}\n", ns),
		"charts/exfil/Chart.yaml": "apiVersion: v2\nname: exfil\nversion: 1.0.0\n",
		"charts/exfil/templates/cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: exfil, namespace: NS}\n"+
			"data:\n  password: {{ .Values.db.password | quote }}\n  shout: {{ .Values.db.password | upper | quote }}\n", ns),
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	args := []string{"diff", "--repo", r.Dir, "--path", "flux"}
	rep, o := driftJSON(t, args...)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if cm := find(t, rep, "ConfigMap", "exfil"); !strings.Contains(cm.Diff, "password: '***'") {
		t.Errorf("the value is not scrubbed in the ConfigMap:\n%s", cm.Diff)
	}
	for _, out := range []outcome{o, drift(t, args...), drift(t, append(args, "-o", "markdown")...)} {
		for _, form := range []string{password, base64.StdEncoding.EncodeToString([]byte(password))} {
			if strings.Contains(out.stdout, form) || strings.Contains(out.stderr, form) {
				t.Errorf("a valuesFrom Secret's value %q is in the output", form)
			}
		}
	}
}
