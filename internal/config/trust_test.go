package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Config {
	t.Helper()
	cfg, err := Parse("drift.yaml", []byte(s), known)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestTrustedTakesRulesAndClustersFromTheBase is the self-ignoring pull request: the
// change edits what it renders and, in the same drift.yaml, ignores /data and moves a
// target to another cluster. Only the rendering changes are used.
func TestTrustedTakesRulesAndClustersFromTheBase(t *testing.T) {
	t.Parallel()
	base := mustParse(t, `
defaults: {context: ci, fieldManager: flux}
targets:
  - name: app
    path: app
    context: staging
    mask: [{kind: ConfigMap, paths: [/data/token]}]
ignore:
  - kind: Deployment
    paths: [/spec/replicas]
`)
	head := mustParse(t, `
defaults: {context: prod, fieldManager: me, namespace: shop, applier: kubectl}
targets:
  - name: app
    path: app-v2
    namespace: web
    context: prod
    applier: flux
    flux: {name: sneaky-kustomization}
    ignore: [{kind: ConfigMap, paths: [/data]}]
  - name: extra
    path: extra
    context: staging
  - name: sneaky
    path: sneaky
    context: prod-admin
ignore:
  - kind: ConfigMap
    paths: [/data]
`)
	tr := Trusted(base, head)
	got := tr.Config
	if got.Defaults != (Defaults{Context: "ci", FieldManager: "flux", Namespace: "shop"}) {
		t.Errorf("defaults = %+v: context and field manager must be the base's, the namespace the change's", got.Defaults)
	}
	if !reflect.DeepEqual(got.Ignore, base.Ignore) {
		t.Errorf("top-level ignore rules = %+v, want the base's", got.Ignore)
	}
	app := got.Targets[0]
	if app.Path != "app-v2" || app.Namespace != "web" {
		t.Errorf("app renders %s in %s, want the change's app-v2 in web", app.Path, app.Namespace)
	}
	if app.Context != "staging" || app.Applier != "" || app.Flux != nil || len(app.Ignore) != 0 || len(app.Mask) != 1 {
		t.Errorf("app = %+v: context, apply mode and rules must be the base's", app)
	}
	if got.Targets[1].Context != "staging" || tr.Refused["extra"] != "" {
		t.Errorf("a new target may use a context the base names: %+v, refused %q", got.Targets[1], tr.Refused["extra"])
	}
	if msg := tr.Refused["sneaky"]; !strings.Contains(msg, `"prod-admin"`) || !strings.Contains(msg, "--config-from head") {
		t.Errorf("a new target on a cluster the base does not name must be refused, got %q", msg)
	}
	want := []string{
		"the top-level ignore rules",
		"defaults.context",
		"defaults.fieldManager",
		"defaults.applier",
		"target app: context, applier, flux, ignore rules, mask rules",
	}
	if !reflect.DeepEqual(tr.NotApplied, want) {
		t.Errorf("not applied =\n%q\nwant\n%q", tr.NotApplied, want)
	}
}

func TestTrustedWithoutABaseConfigAllowsOnlyTheCurrentContext(t *testing.T) {
	t.Parallel()
	head := mustParse(t, "targets:\n  - {name: a, path: a}\n  - {name: b, path: b, context: prod}\nmask: [{kind: Secret, paths: [/x]}]\n")
	tr := Trusted(nil, head)
	if len(tr.Config.Targets) != 2 || tr.Refused["a"] != "" || tr.Refused["b"] == "" {
		t.Fatalf("targets %+v refused %v", tr.Config.Targets, tr.Refused)
	}
	if len(tr.Config.Mask) != 0 || !reflect.DeepEqual(tr.NotApplied, []string{"the top-level mask rules"}) {
		t.Errorf("mask %+v, not applied %q", tr.Config.Mask, tr.NotApplied)
	}
}

func TestTrustedWithIdenticalFilesNotesNothing(t *testing.T) {
	t.Parallel()
	src := "defaults: {context: c}\ntargets:\n  - {name: a, path: a, fieldManager: flux, ignore: [{kind: X, paths: [/y]}]}\n"
	tr := Trusted(mustParse(t, src), mustParse(t, src))
	if len(tr.NotApplied) != 0 || len(tr.Refused) != 0 {
		t.Errorf("not applied %q, refused %v", tr.NotApplied, tr.Refused)
	}
	if !reflect.DeepEqual(tr.Config.Targets, mustParse(t, src).Targets) {
		t.Errorf("targets changed: %+v", tr.Config.Targets)
	}
}

func TestKubeconfigInDriftYAMLIsRefused(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"targets:\n  - {name: a, path: a, kubeconfig: ci/kubeconfig.yaml}\n",
		"defaults: {kubeconfig: ~/.kube/config}\ntargets:\n  - {name: a, path: a}\n",
	} {
		_, err := Parse("drift.yaml", []byte(src), known)
		if err == nil || !strings.Contains(err.Error(), "kubeconfig is not read from drift.yaml") || !strings.Contains(err.Error(), "--kubeconfig") {
			t.Errorf("%q: err = %v", src, err)
		}
	}
}

// TestEveryTargetKeyIsClassified notices a new drift.yaml key that nobody decided the
// trust of: each must be either rendered (the change may set it) or trusted (the base's).
func TestEveryTargetKeyIsClassified(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, f := range append(append([]string{}, renderedTargetFields...), trustedTargetFields...) {
		known[f] = true
	}
	typ := reflect.TypeOf(Target{})
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() && !known[f.Name] {
			t.Errorf("Target.%s is neither in renderedTargetFields nor in trustedTargetFields: decide whether a pull request may set it", f.Name)
		}
	}
	if n := reflect.TypeOf(Config{}).NumField() + reflect.TypeOf(Defaults{}).NumField(); n != 19 {
		t.Errorf("Config and Defaults have %d fields, Trusted knows 19: classify the new one in Trusted", n)
	}
}

// ephemeral.crds decides how custom resources are checked on an ephemeral server: a
// pull request cannot add, change or drop it.
func TestEphemeralCRDsComeFromTheBase(t *testing.T) {
	t.Parallel()
	base := &Config{Targets: []Target{{Name: "a", Path: "a"}}, Ephemeral: &Ephemeral{CRDs: []string{"crds"}}}
	for _, head := range []*Config{
		{Targets: base.Targets, Ephemeral: &Ephemeral{CRDs: []string{"permissive-crds"}}},
		{Targets: base.Targets},
	} {
		tr := Trusted(base, head)
		if !reflect.DeepEqual(tr.Config.Ephemeral, base.Ephemeral) || !slices.Contains(tr.NotApplied, "ephemeral.crds") {
			t.Errorf("head %+v: ephemeral %+v, not applied %q", head.Ephemeral, tr.Config.Ephemeral, tr.NotApplied)
		}
	}
}

// The clusters discovered objects map to, the URLs that make a source this
// repository, and the chart repositories drift may reach decide where and what is
// checked: a pull request cannot change them.
// Discovering is the base's too: it decides the appliers of what is discovered.
func TestDiscoveryClustersAndRepoURLsComeFromTheBase(t *testing.T) {
	t.Parallel()
	base := &Config{Discover: true, Clusters: map[string]string{"prod": "prod-ctx"}, RepoURLs: []string{"https://git.example/gitops"},
		Charts: &Charts{Allow: []string{"https://charts.example/stable"}}}
	head := &Config{Clusters: map[string]string{"prod": "attacker-ctx", "staging": "x"}, RepoURLs: []string{"https://git.example/other"},
		Charts: &Charts{Allow: []string{"https://charts.example/stable", "https://attacker.example"}}}
	tr := Trusted(base, head)
	if !reflect.DeepEqual(tr.Config.Clusters, base.Clusters) || !reflect.DeepEqual(tr.Config.RepoURLs, base.RepoURLs) || !tr.Config.Discover ||
		!reflect.DeepEqual(tr.Config.Charts, base.Charts) {
		t.Errorf("clusters %v repoURLs %v discover %v", tr.Config.Clusters, tr.Config.RepoURLs, tr.Config.Discover)
	}
	if !slices.Contains(tr.NotApplied, "clusters") || !slices.Contains(tr.NotApplied, "repoURLs") || !slices.Contains(tr.NotApplied, "charts.allow") {
		t.Errorf("not applied %q", tr.NotApplied)
	}
}

// TestDiscoveringIsTheBases: a pull request cannot turn discovery on (it would choose
// the appliers of what it adds), a base without drift.yaml discovers, and a change
// that deletes drift.yaml keeps the base's rules.
func TestDiscoveringIsTheBases(t *testing.T) {
	t.Parallel()
	base := mustParse(t, "targets:\n  - {name: a, path: a}\nmask: [{kind: ConfigMap, paths: [/data/x]}]\n")
	head := mustParse(t, "discover: true\ntargets:\n  - {name: a, path: a}\n  - {name: Application/x, context: prod}\n")
	tr := Trusted(base, head)
	if tr.Config.Discover || !slices.Contains(tr.NotApplied, "discover") {
		t.Errorf("discover %v, not applied %q", tr.Config.Discover, tr.NotApplied)
	}
	if x := tr.Config.Targets[1]; x.Context != "" || tr.Refused["Application/x"] != "" {
		t.Errorf("a path-less entry the base lacks set context %q (refused %q)", x.Context, tr.Refused["Application/x"])
	}
	if tr := Trusted(nil, mustParse(t, "targets:\n  - {name: a, path: a}\n")); !tr.Config.Discover {
		t.Errorf("a base without drift.yaml discovers")
	}
	tr = Trusted(base, nil)
	if tr.Config == nil || len(tr.Config.Mask) != 1 || len(tr.Config.Targets) != 0 {
		t.Errorf("a deleted drift.yaml: %+v", tr.Config)
	}
}

// A pull request cannot declare that what it changes deploys nothing: deploysNothing
// is the base's.
func TestDeploysNothingIsTheBases(t *testing.T) {
	t.Parallel()
	base := &Config{DeploysNothing: []string{"docs/**"}, Discover: true}
	head := &Config{DeploysNothing: []string{"docs/**", "apps/**"}, Discover: true}
	tr := Trusted(base, head)
	if got := tr.Config.DeploysNothing; !reflect.DeepEqual(got, []string{"docs/**"}) {
		t.Errorf("deploysNothing = %v, want the base's", got)
	}
	if !slices.Contains(tr.NotApplied, "deploysNothing") {
		t.Errorf("NotApplied = %v, want deploysNothing named", tr.NotApplied)
	}
}
