package plan

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/config"
)

// The applier of each target: drift.yaml's (applyMode as its old name), the
// default's, or the override for every target; a controller's field manager is its
// own, and a different one of the target's own is refused.
func TestApplierOfEachTarget(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("drift.yaml", []byte(`defaults: {fieldManager: ci}
targets:
- {name: plain, path: a}
- {name: old, path: b, applyMode: client}
- {name: gitops, path: c, applier: flux, flux: {name: apps}}
- {name: chart, path: d, applier: helm}
- {name: wrong, path: e, applier: helm, fieldManager: me}
`), config.Known{})
	if err != nil {
		t.Fatal(err)
	}
	manager := func(s string) *string { return &s }
	cases := []struct {
		ov   Overrides
		want string // name=applier/manager, refused as name=refused
	}{
		{Overrides{}, "plain=kubectl-server-side/ci old=kubectl/ci gitops=flux/ chart=helm/ wrong=refused"},
		{Overrides{Applier: applier.Kubectl}, "plain=kubectl/ci old=kubectl/ci gitops=kubectl/ci chart=kubectl/ci wrong=kubectl/me"},
		{Overrides{Applier: applier.KubectlServerSide}, "plain=kubectl-server-side/ci old=kubectl-server-side/ci gitops=kubectl-server-side/ci chart=kubectl-server-side/ci wrong=kubectl-server-side/me"},
		{Overrides{Applier: applier.Flux, FieldManager: manager("kustomize-controller")}, "plain=flux/ old=flux/ gitops=flux/ chart=flux/ wrong=flux/"},
		{Overrides{Applier: applier.Flux, FieldManager: manager("me")}, "plain=refused old=refused gitops=refused chart=refused wrong=refused"},
	}
	for _, c := range cases {
		var got []string
		for _, tg := range Targets(&Config{Use: cfg}, "", nil, c.ov, appliers.All()) {
			if tg.Refused != "" {
				got = append(got, tg.Name+"=refused")
				continue
			}
			got = append(got, tg.Name+"="+string(tg.Applier.Name())+"/"+tg.FieldManager)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.ov, strings.Join(got, " "), c.want)
		}
	}
}

// Paths asked for are one target each, with drift.yaml's defaults and the overrides;
// a chart's release is named after its directory.
func TestPathsAreTargetsWithDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("drift.yaml", []byte("defaults: {namespace: shop, context: prod}\ntargets:\n- {name: x, path: x}\n"), config.Known{})
	if err != nil {
		t.Fatal(err)
	}
	ns, kc := "other", "/k"
	got := Targets(&Config{Use: cfg}, "", []string{"charts/web", ""}, Overrides{Namespace: &ns, Kubeconfig: &kc}, appliers.All())
	if len(got) != 2 {
		t.Fatalf("got %d targets, want one per path", len(got))
	}
	web, root := got[0], got[1]
	if web.Name != "charts/web" || web.Namespace != "other" || web.Cluster != (ClusterKey{Kubeconfig: "/k", Context: "prod"}) || web.Spec.Helm.ReleaseName != "web" {
		t.Errorf("charts/web: %+v", web)
	}
	if root.Name != "." || root.Spec.Helm.ReleaseName != "release" {
		t.Errorf("the root: name %q, release %q", root.Name, root.Spec.Helm.ReleaseName)
	}
}

func TestSelectNamed(t *testing.T) {
	t.Parallel()
	targets := func() []Target { return []Target{{Name: "web-prod"}, {Name: "web-dev"}, {Name: "api"}} }
	ts := targets()
	if err := SelectNamed(ts, []string{"web-*"}); err != nil {
		t.Fatal(err)
	}
	if ts[0].Skipped != "" || ts[1].Skipped != "" || ts[2].Skipped == "" {
		t.Errorf("web-* selected %+v", ts)
	}
	err := SelectNamed(targets(), []string{"db"})
	if err == nil || !strings.Contains(err.Error(), `--target "db" names no target; the targets are: api, web-dev, web-prod`) {
		t.Errorf("an unknown name: %v", err)
	}
	if err := SelectNamed(targets(), []string{"[web"}); err == nil || !strings.Contains(err.Error(), "not a valid pattern") {
		t.Errorf("a bad pattern: %v", err)
	}
}

// A target refused before it had a spec (a discovered object drift cannot preview)
// reads its definition only, not the whole repository: a change elsewhere does not
// select it.
func TestATargetWithoutASpecReadsItsDefinitionOnly(t *testing.T) {
	in := InputsOf(Target{Definition: []string{"apps/hr.yaml"}}, nil, nil)
	if !in.Touched("apps/hr.yaml") || in.Touched("talos/controlplane.yaml") || in.Touched("apps/other.yaml") {
		t.Errorf("inputs: %+v", in)
	}
}

// A definition file that is a kustomization file (a valuesFrom Secret a
// secretGenerator makes) stands for its directory's tree: a change to a file the
// generator reads selects the target.
func TestAGeneratedInputReadsItsKustomizationsTree(t *testing.T) {
	in := InputsOf(Target{Definition: []string{"apps/hr.yaml", "apps/app/kustomization.yaml"}}, nil, nil)
	if !in.Touched("apps/app/values.enc.yaml") || !in.Touched("apps/hr.yaml") || in.Touched("apps/other/x.yaml") {
		t.Errorf("inputs: %+v", in)
	}
}
