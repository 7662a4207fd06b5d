package config

import (
	"os"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/risk"
)

func TestParseTheTestRepositorysConfig(t *testing.T) {
	data, err := os.ReadFile("../../testdata/platform/drift.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse("drift.yaml", data, known)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Targets) != 4 || cfg.Defaults.FieldManager != "flux" {
		t.Fatalf("config = %+v", cfg)
	}
	web := cfg.Targets[3]
	if web.Name != "web" || web.Context != "beta" || web.Helm == nil || web.Helm.ReleaseName != "web" ||
		len(web.Helm.ValuesFiles) != 2 || web.Helm.Values["cache"].(map[string]any)["maxMemory"] != "256mb" {
		t.Errorf("web target = %+v helm %+v", web, web.Helm)
	}
	if web.Line() == 0 || cfg.Targets[0].Line() >= web.Line() {
		t.Errorf("target lines: %d, %d", cfg.Targets[0].Line(), web.Line())
	}
	if len(cfg.Ignore) != 1 || cfg.Ignore[0].Kind != "Deployment" || cfg.Ignore[0].Paths[0] != "/spec/replicas" || cfg.Ignore[0].Managers[0] != "hpa-controller" {
		t.Errorf("ignore = %+v", cfg.Ignore)
	}
	if !cfg.Mask[0].Matches("", "ConfigMap", "shop", "shop-credentials-9gmgmddmt8") || cfg.Mask[0].Matches("", "Secret", "shop", "shop-credentials") {
		t.Errorf("mask selector matches wrongly: %+v", cfg.Mask[0])
	}
}

func TestParseErrorsGiveLineAndKey(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown key": {"targets:\n  - name: a\n    path: a\n    contxt: prod\n",
			`drift.yaml: line 4: unknown key "contxt" in a target`},
		"unknown top-level key": {"targets: []\ntarget: x\n",
			`line 2: unknown key "target" in the top level`},
		"wrong type": {"targets:\n  - name: a\n    path: [a, b]\n",
			"line 3: a list where text is expected"},
		"values files not a list": {"targets:\n  - name: a\n    path: a\n    helm:\n      valuesFiles: prod.yaml\n",
			`line 5: text "prod.yaml" where a list is expected`},
		"malformed": {"targets:\n  - name: a\n   path: a\n",
			"drift.yaml: line 1: did not find expected"},
		"no targets":     {"version: 1\n", "no targets"},
		"empty":          {"", "drift.yaml is empty"},
		"bad version":    {"version: 2\ntargets: [{name: a, path: a}]\n", "version 2 is not supported"},
		"duplicate name": {"targets:\n  - {name: a, path: a}\n  - {name: a, path: b}\n", "drift.yaml line 3: target 2 (a): name \"a\" is already used by target 1"},
		"missing path":   {"targets:\n  - name: a\n", "target 1 (a): path is missing"},
		"path escapes":   {"targets:\n  - {name: a, path: ../other}\n", "path ../other leads outside the repository"},
		"absolute path":  {"targets:\n  - {name: a, path: /etc}\n", "path /etc must be relative"},
		"bad renderer":   {"targets:\n  - {name: a, path: a, renderer: jsonnet}\n", `renderer "jsonnet" is not one of plain, kustomize, helm`},
		"helm on plain":  {"targets:\n  - {name: a, path: a, renderer: plain, helm: {releaseName: x}}\n", "has helm options but renderer plain"},
		"bad pointer":    {"targets: [{name: a, path: a}]\nignore:\n  - kind: Deployment\n    paths: [spec.replicas]\n", `path "spec.replicas" is not a JSON pointer`},
		"empty ignore":   {"targets: [{name: a, path: a}]\nignore:\n  - kind: Deployment\n", "ignore rule 1: give paths, managers or jq"},
		"bad glob":       {"targets: [{name: a, path: a}]\nmask:\n  - name: \"[\"\n    paths: [/data]\n", `pattern "[" is malformed`},
		"bad name":       {"targets:\n  - {name: \"a b\", path: a}\n", `name "a b" may hold only`},
		"charts.allow not a URL": {"targets: [{name: a, path: a}]\ncharts: {allow: [charts.example/stable]}\n",
			`charts.allow: charts.example/stable is not a chart repository URL drift can match`},
		"charts.allow with dots": {"targets: [{name: a, path: a}]\ncharts: {allow: [\"https://charts.example/a/%2e%2e/b\"]}\n",
			`charts.allow: https://charts.example/a/%2e%2e/b is not a chart repository URL drift can match (https://host[:port]/path, http://… or oci://…): its path has an encoded dot (%2e)`},
		"charts.allow with userinfo": {"targets: [{name: a, path: a}]\ncharts: {allow: [\"https://robot:s3cr3t@charts.example/\"]}\n",
			`charts.allow: https://charts.example/ is not a chart repository URL drift can match (https://host[:port]/path, http://… or oci://…): it has userinfo`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("drift.yaml", []byte(c.yaml), known)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("a credential in the error: %v", err)
			}
		})
	}
}

func TestSelectorGlobs(t *testing.T) {
	s := Selector{Group: "apps", Kind: "Deployment", Namespace: "prod-*"}
	if !s.Matches("apps", "Deployment", "prod-eu", "web") || s.Matches("apps", "Deployment", "staging", "web") || s.Matches("", "Deployment", "prod-eu", "web") {
		t.Error("selector matched wrongly")
	}
	if !(Selector{}).Matches("x", "Y", "z", "w") {
		t.Error("empty selector must match everything")
	}
}

func TestApplierAndItsOldName(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("drift.yaml", []byte("defaults: {applier: flux}\ntargets:\n- {name: a, path: a}\n- {name: b, path: b, applyMode: client}\n- {name: c, path: c, applier: argocd, argocd: {application: shop, tracking: label}}\n"), known)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []applier.Name{applier.Flux, applier.Kubectl, applier.ArgoCD} {
		if got := cfg.Targets[i].ApplierOf(cfg.Defaults); got != want {
			t.Errorf("target %s: applier %q, want %q", cfg.Targets[i].Name, got, want)
		}
	}
	for src, want := range map[string]string{
		"targets:\n- {name: a, path: a, applier: kubectl-client}\n":                 `applier "kubectl-client" is not one of argocd, argocd-server-side, flux, helm, kubectl, kubectl-server-side`,
		"targets:\n- {name: a, path: a, applier: kubectl, applyMode: client}\n":     "sets both applier and applyMode, its old name: keep applier",
		"targets:\n- {name: a, path: a, applyMode: ssa}\n":                          `applyMode "ssa" is not server or client`,
		"targets:\n- {name: a, path: a, flux: {name: apps}}\n":                      "has flux options but applier kubectl-server-side (the default): set applier: flux",
		"targets:\n- {name: a, path: a, applier: argocd, argocd: {tracking: id}}\n": `argocd tracking "id" is not annotation, label or annotation+label`,
		"defaults: {applier: fluxcd}\ntargets:\n- {name: a, path: a}\n":             `defaults: applier "fluxcd" is not one of`,
	} {
		if _, err := Parse("drift.yaml", []byte(src), known); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want it to say %q", src, err, want)
		}
	}
}

// known are the names drift.yaml may use that the config package does not define, as
// drift passes them: internal/risk's rules.
var known = Known{Risks: risk.Names()}

// A risk rule risks.disable names must be one the caller knows.
func TestRisksDisableNamesKnownRules(t *testing.T) {
	t.Parallel()
	src := []byte("targets:\n- {name: a, path: a}\nrisks: {disable: [pod-rollout, pod-rolout]}\n")
	if _, err := Parse("drift.yaml", src, Known{Risks: []string{"pod-rollout", "secret-changed"}}); err == nil ||
		!strings.Contains(err.Error(), `drift.yaml: risks.disable: unknown risk rule "pod-rolout" (known: pod-rollout, secret-changed)`) {
		t.Errorf("an unknown rule: %v", err)
	}
	if _, err := Parse("drift.yaml", []byte("targets:\n- {name: a, path: a}\nrisks: {disable: [pod-rollout]}\n"), Known{Risks: []string{"pod-rollout"}}); err != nil {
		t.Errorf("a known rule: %v", err)
	}
}
