package main

import (
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo/repotest"
)

// chartRepository serves a chart repository holding redis 18.1.2 and web 1.0.0, each
// rendering one ConfigMap from its values.
func chartRepository(t *testing.T) *repotest.Server {
	t.Helper()
	src := t.TempDir()
	for _, c := range []struct{ name, version, data string }{
		{"redis", "18.1.2", "maxmemory: {{ .Values.maxmemory | default \"64mb\" | quote }}"},
		{"web", "1.0.0", "greeting: {{ .Values.greeting | default \"hello\" | quote }}"},
	} {
		ch := &chart.Chart{
			Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: c.name, Version: c.version},
			Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\n" +
				"  namespace: {{ .Release.Namespace }}\ndata:\n  " + c.data + "\n")}},
		}
		if _, err := chartutil.Save(ch, src); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := repotest.NewTempServerWithCleanup(t, filepath.Join(src, "*.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if err := srv.CreateIndex(); err != nil {
		t.Fatal(err)
	}
	return srv
}

// A HelmRelease of a chart from a HelmRepository, and an Argo CD Application of a
// chart with values from a ref source: fetched from the repository drift.yaml allows,
// verified, cached, and rendered with their values. A pull request that points the
// HelmRepository at another host and allows that host in its own drift.yaml is refused
// the fetch: the allow list is the base's.
func TestRemoteChartsAreFetchedFromAllowedRepositoriesOnly(t *testing.T) {
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	srv := chartRepository(t)
	other := chartRepository(t)
	installFluxCRDs(t)
	r := discoveredRepo(t, "flux", "ssh://git@github.com/example/fleet")
	sources := strings.Replace(readTestdata(t, "flux/infrastructure/configs/sources.yaml"), "https://charts.example.com/bitnami", srv.URL(), 1)
	if _, err := r.CommitFiles(map[string]string{
		"infrastructure/configs/sources.yaml": sources,
		"drift.yaml":                          "discover: true\ncharts:\n  allow: [" + srv.URL() + "]\n",
	}, "charts from the test repository"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--path", "clusters/staging")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	redis := targetNamed(rep, "HelmRelease/podinfo/redis")
	if redis == nil || len(redis.Objects) != 1 || redis.Objects[0].Name != "redis-settings" || redis.Objects[0].Category != "add" ||
		!strings.Contains(redis.Objects[0].Diff, "maxmemory: 64mb") {
		t.Fatalf("redis: %+v", redis)
	}

	// The pull request: another host, allowed only by its own drift.yaml.
	if _, err := r.Git("checkout", "-q", "-b", "other-host"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{
		"infrastructure/configs/sources.yaml": strings.Replace(sources, srv.URL(), other.URL(), 1),
		"drift.yaml":                          "discover: true\ncharts:\n  allow: [" + srv.URL() + ", " + other.URL() + "]\n",
	}, "another chart host"); err != nil {
		t.Fatal(err)
	}
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--path", "clusters/staging", "--ref", "HEAD", "--base", "main")
	if o.code != exitError {
		t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
	}
	redis = targetNamed(rep, "HelmRelease/podinfo/redis")
	if redis == nil || len(redis.Objects) != 1 || redis.Objects[0].ErrorReason != "chart-unavailable" || !strings.Contains(redis.Objects[0].Error, "is not in charts.allow") {
		t.Errorf("redis from a host the pull request adds: %+v", redis)
	}
	if rep.Config == nil || !strings.Contains(strings.Join(rep.Config.NotApplied, ","), "charts.allow") {
		t.Errorf("the report does not say the change's charts.allow was not applied: %+v", rep.Config)
	}
}

// An Argo CD Application whose chart comes from a chart repository and whose values
// come from this repository through a ref source.
func TestAnArgoCDChartWithValuesFromTheRepository(t *testing.T) {
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	srv := chartRepository(t)
	r := discoveredRepo(t, "argocd", "https://github.com/example/gitops.git")
	app := strings.Replace(readTestdata(t, "argocd/web-chart.yaml"), "https://charts.example.com/stable", srv.URL(), 1)
	if _, err := r.CommitFiles(map[string]string{"web-chart.yaml": app, "drift.yaml": "discover: true\ncharts: {allow: [" + srv.URL() + "]}\n"}, "charts"); err != nil {
		t.Fatal(err)
	}
	apply(t, "kubectl", "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n")
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--target", "Application/web")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	web := targetNamed(rep, "Application/web")
	if web == nil || len(web.Objects) != 1 || !strings.Contains(web.Objects[0].Diff, "greeting: hello from the repository") {
		t.Errorf("web: %+v", web)
	}
}

// A chart of the repository whose dependency is not vendored: fetched from the
// chart repository drift.yaml allows, at the version Chart.lock pins, as `helm
// dependency build` would.
func TestChartDependenciesAreFetchedWhenNotVendored(t *testing.T) {
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	srv := chartRepository(t)
	ns := namespace(t)
	r := repo(t, map[string]string{
		"drift.yaml":             "charts: {allow: [" + srv.URL() + "]}\ntargets:\n- {name: site, path: site, namespace: " + ns + "}\n",
		"site/Chart.yaml":        "apiVersion: v2\nname: site\nversion: 0.1.0\ndependencies:\n- {name: web, version: '^1.0.0', repository: '" + srv.URL() + "'}\n",
		"site/Chart.lock":        "dependencies:\n- {name: web, version: 1.0.0, repository: '" + srv.URL() + "'}\ndigest: sha256:0\ngenerated: \"2026-01-01T00:00:00Z\"\n",
		"site/values.yaml":       "web:\n  greeting: from the parent chart\n",
		"site/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: site}\ndata: {a: b}\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if web := find(t, rep, "ConfigMap", "site-settings"); !strings.Contains(web.Diff, "greeting: from the parent chart") {
		t.Errorf("the dependency's ConfigMap:\n%s", web.Diff)
	}
}

// A kustomization's helmCharts entry with a repo: the chart fetched from the
// repository drift.yaml allows, as `kustomize build --enable-helm` pulls it, and
// inflated in process.
func TestKustomizeHelmChartsAreFetchedAndInflated(t *testing.T) {
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	srv := chartRepository(t)
	ns := namespace(t)
	r := repo(t, map[string]string{
		"drift.yaml": "charts: {allow: [" + srv.URL() + "]}\ntargets:\n- {name: site, path: site}\n",
		"site/kustomization.yaml": "namespace: " + ns + "\nhelmCharts:\n- name: web\n  repo: " + srv.URL() + "\n  version: 1.0.0\n  releaseName: site\n" +
			"  valuesInline: {greeting: inflated}\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if web := find(t, rep, "ConfigMap", "site-settings"); web.Namespace != ns || !strings.Contains(web.Diff, "greeting: inflated") {
		t.Errorf("the inflated ConfigMap: %+v", web)
	}
}

// --base selects exactly the targets a change affects, and each reports exactly the
// objects that change: a HelmRelease's values changed through its valuesFrom
// ConfigMap, and an Application's chart bumped to a new version.
func TestAChangeSelectsExactlyTheDiscoveredTargetsItAffects(t *testing.T) {
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	src := t.TempDir()
	for _, v := range []struct{ version, greeting string }{{"1.0.0", "hello"}, {"1.1.0", "bonjour"}} {
		ch := &chart.Chart{
			Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "web", Version: v.version},
			Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\n" +
				"  namespace: {{ .Release.Namespace }}\ndata:\n  greeting: {{ .Values.greeting | default \"" + v.greeting + "\" | quote }}\n")}},
		}
		if _, err := chartutil.Save(ch, src); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := repotest.NewTempServerWithCleanup(t, filepath.Join(src, "*.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if err := srv.CreateIndex(); err != nil {
		t.Fatal(err)
	}
	r := discoveredRepo(t, "argocd", "https://github.com/example/gitops.git")
	app := strings.Replace(readTestdata(t, "argocd/web-chart.yaml"), "https://charts.example.com/stable", srv.URL(), 1)
	app = strings.Replace(app, "      valueFiles:\n      - $values/envs/web-values.yaml\n", "      releaseName: web\n", 1)
	if _, err := r.CommitFiles(map[string]string{"web-chart.yaml": app, "drift.yaml": "discover: true\ncharts: {allow: [" + srv.URL() + "]}\n"}, "chart 1.0.0"); err != nil {
		t.Fatal(err)
	}
	apply(t, "kubectl", "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n")
	if _, err := r.Git("checkout", "-q", "-b", "bump"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"web-chart.yaml": strings.Replace(app, "targetRevision: 1.0.0", "targetRevision: 1.1.0", 1)}, "chart 1.1.0"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "--base", "main")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for _, tg := range rep.Targets {
		if tg.Name != "Application/web" && tg.Skipped == "" {
			t.Errorf("%s was previewed: the change does not touch it", tg.Name)
		}
	}
	web := targetNamed(rep, "Application/web")
	// The story of the change: the base's chart (1.0.0) said hello, the head's
	// (1.1.0) says bonjour; that the cluster lacks it is drift, told apart.
	if web == nil || len(web.Objects) != 1 || web.Objects[0].Category != "modify" || len(web.Drift) != 1 || web.Drift[0].Category != "add" {
		t.Fatalf("Application/web: %+v", web)
	}
	if d := web.Objects[0].Diff; !strings.Contains(d, "-  greeting: hello") || !strings.Contains(d, "+  greeting: bonjour") {
		t.Errorf("the chart bump's diff:\n%s", d)
	}
}
