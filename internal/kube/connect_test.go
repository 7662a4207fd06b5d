package kube

import (
	"reflect"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// TestFlagsForCopiesEveryConnectionFlag guards FlagsFor against kubectl flags added in
// later cli-runtime versions: every exported field must reach each cluster's flags.
func TestFlagsForCopiesEveryConnectionFlag(t *testing.T) {
	t.Parallel()
	base := genericclioptions.NewConfigFlags(true)
	v := reflect.ValueOf(base).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() || f.Kind() != reflect.Pointer {
			continue
		}
		f.Set(reflect.New(f.Type().Elem())) // a fresh pointer, distinct from NewConfigFlags'
	}
	got := FlagsFor(base, "", "")
	gv := reflect.ValueOf(got).Elem()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if !v.Type().Field(i).IsExported() || v.Field(i).Kind() != reflect.Pointer || name == "ClusterName" {
			continue
		}
		if gv.Field(i).Pointer() != v.Field(i).Pointer() {
			t.Errorf("FlagsFor does not copy %s", name)
		}
	}
	ctx := FlagsFor(base, "/k", "prod")
	if *ctx.Context != "prod" || *ctx.KubeConfig != "/k" || *base.Context == "prod" {
		t.Errorf("context/kubeconfig not set on a copy: %q %q (base %q)", *ctx.Context, *ctx.KubeConfig, *base.Context)
	}
}
