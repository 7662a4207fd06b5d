package main

import (
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/plan"
)

// --applier and its old name --apply-mode: one of them, naming a profile.
func TestApplierFlagsAreValidated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string // the applier the overrides carry; "" for an error
	}{
		{nil, ""},
		{[]string{"--applier", "flux"}, "flux"},
		{[]string{"--apply-mode", "server"}, "kubectl-server-side"},
		{[]string{"--apply-mode", "client"}, "kubectl"},
		{[]string{"--applier", "fluxcd"}, "error"},
		{[]string{"--applier", "client"}, "error"},
		{[]string{"--applier", "kubectl", "--apply-mode", "client"}, "error"},
		{[]string{"--apply-mode", "ssa"}, "error"},
	} {
		o := &commonOptions{}
		o.init(genericiooptions.IOStreams{})
		f := pflag.NewFlagSet("diff", pflag.ContinueOnError)
		o.addFlags(f)
		if err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := o.validate(plan.ConfigFromBase)
		switch {
		case c.want == "error" && err == nil:
			t.Errorf("%v: no error", c.args)
		case c.want != "error" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.want != "error" && string(o.overrides().Applier) != c.want:
			t.Errorf("%v: overrides name applier %q, want %q", c.args, o.overrides().Applier, c.want)
		}
	}
}
