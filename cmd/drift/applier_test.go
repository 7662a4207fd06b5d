package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
)

// The applier of each target: drift.yaml's (applyMode as its old name), the
// default's, or --applier (--apply-mode) for every target; a controller's field
// manager is its own.
func TestApplierOfEachTarget(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("drift.yaml", []byte(`defaults: {fieldManager: ci}
targets:
- {name: plain, path: a}
- {name: old, path: b, applyMode: client}
- {name: gitops, path: c, applier: flux, flux: {name: apps}}
- {name: chart, path: d, applier: helm}
- {name: wrong, path: e, applier: helm, fieldManager: me}
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string // name=applier/manager, refused as name=refused
	}{
		{nil, "plain=kubectl-server-side/ci old=kubectl/ci gitops=flux/ chart=helm/ wrong=refused"},
		{[]string{"--applier", "kubectl"}, "plain=kubectl/ci old=kubectl/ci gitops=kubectl/ci chart=kubectl/ci wrong=kubectl/me"},
		{[]string{"--apply-mode", "server"}, "plain=kubectl-server-side/ci old=kubectl-server-side/ci gitops=kubectl-server-side/ci chart=kubectl-server-side/ci wrong=kubectl-server-side/me"},
		{[]string{"--applier", "flux", "--field-manager", "kustomize-controller"}, "plain=flux/ old=flux/ gitops=flux/ chart=flux/ wrong=flux/"},
	}
	for _, c := range cases {
		o := &diffOptions{kube: genericclioptions.NewConfigFlags(true), Output: "text"}
		o.kube.ClusterName = nil
		f := pflag.NewFlagSet("diff", pflag.ContinueOnError)
		o.addFlags(f)
		if err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := o.validate(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var got []string
		for _, tg := range o.planTargets(nil, &loadedConfig{cfg: cfg}, nil) {
			if tg.refused != "" {
				got = append(got, tg.name+"=refused")
				continue
			}
			got = append(got, tg.name+"="+tg.applier+"/"+tg.fieldManager)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.args, strings.Join(got, " "), c.want)
		}
	}
	for _, args := range [][]string{{"--applier", "fluxcd"}, {"--applier", "client"}, {"--applier", "kubectl", "--apply-mode", "client"}, {"--apply-mode", "ssa"}} {
		o := &diffOptions{kube: genericclioptions.NewConfigFlags(true), Output: "text"}
		o.kube.ClusterName = nil
		f := pflag.NewFlagSet("diff", pflag.ContinueOnError)
		o.addFlags(f)
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := o.validate(); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if len(dryrun.ProfileNames()) != len(config.Appliers) {
		t.Errorf("drift.yaml knows appliers %v, dryrun has profiles %v", config.Appliers, dryrun.ProfileNames())
	}
}
