package argocd

import (
	"encoding/json"
	"errors"
	"reflect"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/fields"
)

// Before a client-side apply of an RBAC object, gitops-engine runs kubectl auth
// reconcile (pkg/utils/kube/resource_ops.go, rbacReconcile), as manager
// argocd-application-controller: it creates a missing object as written, and adds to
// an existing one the labels, annotations, rules and subjects it lacks. kubectl apply
// then patches the result to the repository's object, so the object ends as a plain
// client-side apply leaves it, but the fields the reconcile wrote and the patch left
// alone are the reconcile's. A binding whose roleRef changes is deleted and created
// anew by the reconcile, which drift does not predict: the patch's error shows.

// reconcileManager is the manager of the reconcile's writes: the controller's
// client sets no field manager, and the server names it after the user agent, the
// controller binary's name.
const reconcileManager = "argocd-application-controller"

// reconciledFirst moves to argocd-application-controller the fields of merged
// (the client-side apply's answer for live) that the reconcile wrote.
func reconciledFirst(merged, live *unstructured.Unstructured) {
	if merged.GetAPIVersion() != "rbac.authorization.k8s.io/v1" {
		return
	}
	var expected map[string]any
	if err := json.Unmarshal([]byte(merged.GetAnnotations()[applier.LastAppliedAnnotation]), &expected); err != nil {
		return
	}
	exp := &unstructured.Unstructured{Object: expected}
	if live == nil || recreates(exp, live) != "" {
		// Created by the reconcile; the apply adds only its annotation.
		mine := fields.Owned(merged.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
			return e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate
		})
		moveFields(merged, mine.Difference(fieldpath.NewSet(applier.LastAppliedPath)))
		return
	}
	paths, err := reconciledFields(live, exp, merged)
	if err != nil || paths.Empty() {
		return
	}
	moveFields(merged, paths)
}

// recreates says why kubectl auth reconcile deletes and creates obj anew: a
// binding whose roleRef changes, unless it opted out of reconciliation.
func recreates(obj, live *unstructured.Unstructured) string {
	bindingOf := map[string]func(*unstructured.Unstructured) (reconciliation.RoleBinding, error){"RoleBinding": roleBinding, "ClusterRoleBinding": clusterRoleBinding}[live.GetKind()]
	if bindingOf == nil || live.GetAPIVersion() != "rbac.authorization.k8s.io/v1" {
		return ""
	}
	existing, err := bindingOf(live)
	if err != nil {
		return ""
	}
	exp, err := bindingOf(obj)
	if err != nil {
		return ""
	}
	res, err := (&reconciliation.ReconcileRoleBindingOptions{RoleBinding: exp, Client: bindingGetter{existing}}).Run()
	if err != nil || res.Protected || res.Operation != reconciliation.ReconcileRecreate {
		return ""
	}
	return "kubectl auth reconcile, which Argo CD runs before applying RBAC objects client-side, recreates a binding whose roleRef changes"
}

// reconciledFields are the fields kubectl auth reconcile writes to live for expected
// (k8s.io/component-helpers' reconciliation, in dry-run) that merged keeps as the
// reconcile wrote them.
func reconciledFields(live, expected, merged *unstructured.Unstructured) (*fieldpath.Set, error) {
	var before, after, want map[string]any
	switch live.GetKind() {
	case "Role", "ClusterRole":
		ownerOf := map[string]func(*unstructured.Unstructured) (reconciliation.RuleOwner, error){"Role": roleOwner, "ClusterRole": clusterRoleOwner}[live.GetKind()]
		existing, err := ownerOf(live)
		if err != nil {
			return nil, err
		}
		exp, err := ownerOf(expected)
		if err != nil {
			return nil, err
		}
		res, err := (&reconciliation.ReconcileRoleOptions{Role: exp, Client: ruleOwnerGetter{existing}}).Run()
		if err != nil || res.Protected || res.Operation != reconciliation.ReconcileUpdate {
			return fieldpath.NewSet(), err
		}
		before, after = plain(existing.GetObject()), plain(res.Role.GetObject())
	case "RoleBinding", "ClusterRoleBinding":
		bindingOf := map[string]func(*unstructured.Unstructured) (reconciliation.RoleBinding, error){"RoleBinding": roleBinding, "ClusterRoleBinding": clusterRoleBinding}[live.GetKind()]
		existing, err := bindingOf(live)
		if err != nil {
			return nil, err
		}
		exp, err := bindingOf(expected)
		if err != nil {
			return nil, err
		}
		res, err := (&reconciliation.ReconcileRoleBindingOptions{RoleBinding: exp, Client: bindingGetter{existing}}).Run()
		if err != nil || res.Protected || res.Operation != reconciliation.ReconcileUpdate {
			return fieldpath.NewSet(), err
		}
		before, after = plain(existing.GetObject()), plain(res.RoleBinding.GetObject())
	default:
		return fieldpath.NewSet(), nil
	}
	want = merged.Object
	set := fieldpath.NewSet()
	for _, m := range []string{"labels", "annotations"} {
		was, _, _ := unstructured.NestedStringMap(before, "metadata", m)
		now, _, _ := unstructured.NestedStringMap(after, "metadata", m)
		kept, _, _ := unstructured.NestedStringMap(want, "metadata", m)
		added := false
		for k, v := range now {
			if _, ok := was[k]; !ok && kept[k] == v {
				set.Insert(fieldpath.MakePathOrDie("metadata", m, k))
				added = true
			}
		}
		if added && len(was) == 0 {
			set.Insert(fieldpath.MakePathOrDie("metadata", m))
		}
	}
	for _, f := range []string{"rules", "aggregationRule", "subjects"} {
		if !reflect.DeepEqual(before[f], after[f]) && after[f] != nil && reflect.DeepEqual(after[f], plainField(want, f)) {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
	}
	return set, nil
}

// moveFields gives paths to argocd-application-controller's update entry, taking them
// from the other entries.
func moveFields(obj *unstructured.Unstructured, paths *fieldpath.Set) {
	if paths.Empty() {
		return
	}
	var others []metav1.ManagedFieldsEntry
	mine := paths
	var at *metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.Manager == reconcileManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			if s, err := fields.Of(e); err == nil {
				mine = mine.Union(s)
			}
			at = &e
			continue
		}
		others = append(others, e)
	}
	others, err := fields.Without(others, paths)
	if err != nil {
		return
	}
	if at == nil {
		at = &metav1.ManagedFieldsEntry{Manager: reconcileManager, Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: obj.GetAPIVersion(), FieldsType: "FieldsV1", Time: latest(obj.GetManagedFields())}
	}
	entry, err := fields.Entry(*at, mine)
	if err != nil {
		return
	}
	obj.SetManagedFields(append([]metav1.ManagedFieldsEntry{entry}, others...))
}

func latest(mfs []metav1.ManagedFieldsEntry) *metav1.Time {
	var t *metav1.Time
	for _, e := range mfs {
		if e.Time != nil && (t == nil || t.Before(e.Time)) {
			t = e.Time
		}
	}
	return t
}

// plain is a typed object as JSON values, for comparing with an unstructured one.
func plain(o runtime.Object) map[string]any {
	m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	data, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

// plainField is obj's field f after a round trip through its typed form, so that
// defaulted and omitted values compare alike.
func plainField(obj map[string]any, f string) any {
	data, _ := json.Marshal(obj[f])
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

func roleOwner(u *unstructured.Unstructured) (reconciliation.RuleOwner, error) {
	r := &rbacv1.Role{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r)
	return reconciliation.RoleRuleOwner{Role: r}, err
}

func clusterRoleOwner(u *unstructured.Unstructured) (reconciliation.RuleOwner, error) {
	r := &rbacv1.ClusterRole{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r)
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}, err
}

func roleBinding(u *unstructured.Unstructured) (reconciliation.RoleBinding, error) {
	b := &rbacv1.RoleBinding{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b)
	return reconciliation.RoleBindingAdapter{RoleBinding: b}, err
}

func clusterRoleBinding(u *unstructured.Unstructured) (reconciliation.RoleBinding, error) {
	b := &rbacv1.ClusterRoleBinding{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b)
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}, err
}

var errNoWrites = errors.New("the reconcile is only computed")

// ruleOwnerGetter hands the reconciliation the live role; it is run without Confirm,
// so it writes nothing.
type ruleOwnerGetter struct{ live reconciliation.RuleOwner }

func (g ruleOwnerGetter) Get(string, string) (reconciliation.RuleOwner, error) { return g.live, nil }
func (ruleOwnerGetter) Create(reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	return nil, errNoWrites
}
func (ruleOwnerGetter) Update(reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	return nil, errNoWrites
}

type bindingGetter struct{ live reconciliation.RoleBinding }

func (g bindingGetter) Get(string, string) (reconciliation.RoleBinding, error) { return g.live, nil }
func (bindingGetter) Delete(string, string, types.UID) error                   { return errNoWrites }
func (bindingGetter) Create(reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	return nil, errNoWrites
}
func (bindingGetter) Update(reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	return nil, errNoWrites
}
