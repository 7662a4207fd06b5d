package dryrun

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/reason"
)

func TestApplierMismatchNamesTheManagerFoundAndTheApplierToSet(t *testing.T) {
	t.Parallel()
	withManagers := func(managers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
		var mf []metav1.ManagedFieldsEntry
		for _, m := range managers {
			// manager or manager/Update
			op := metav1.ManagedFieldsOperationApply
			if name, upd, ok := strings.Cut(m, "/"); ok {
				m, op = name, metav1.ManagedFieldsOperationType(upd)
			}
			mf = append(mf, metav1.ManagedFieldsEntry{Manager: m, Operation: op})
		}
		u.SetManagedFields(mf)
		return u
	}
	reg := appliers.All()
	opts := func(name applier.Name) Options {
		return Options{Applier: reg.Get(name), Appliers: reg}.WithDefaults()
	}
	cases := []struct {
		live    *unstructured.Unstructured
		profile applier.Name
		want    string // "" for no warning
	}{
		{withManagers("kustomize-controller", "kube-controller-manager"), "kubectl-server-side",
			"managed by kustomize-controller, the field manager of flux, not by kubectl (kubectl-server-side)"},
		{withManagers("kubectl-client-side-apply/Update"), "flux", "the field manager of kubectl, not by kustomize-controller (flux)"},
		{withManagers("helm/Update"), "kubectl", "the field manager of helm"},
		{withManagers("argocd-controller/Update"), "kubectl-server-side", "set applier: argocd in drift.yaml"},
		{withManagers("argocd-controller"), "kubectl", "set applier: argocd-server-side in drift.yaml"},
		{withManagers("argocd-controller"), "argocd", "set applier: argocd-server-side in drift.yaml"},
		{withManagers("argocd-controller/Update"), "argocd-server-side", "set applier: argocd in drift.yaml"},
		{withManagers("argocd-controller/Update", "argocd-controller"), "argocd-server-side", ""},
		{withManagers("kubectl/Update"), "flux", ""},
		{withManagers("kubectl", "kustomize-controller"), "kubectl-server-side", ""},
		{withManagers("kube-controller-manager/Update", "someone"), "helm", ""},
		{nil, "flux", ""},
	}
	for _, c := range cases {
		w := mismatch(c.live, opts(c.profile))
		switch {
		case c.want == "" && w != nil:
			t.Errorf("%s: unexpected warning %q", c.profile, w.Message)
		case c.want != "" && (w == nil || w.Reason != reason.ApplierMismatch || !strings.Contains(w.Message, c.want)):
			t.Errorf("%s: warning %+v, want it to say %q", c.profile, w, c.want)
		}
	}
}
