package argocd

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/clientside"
)

func argoObj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestArgoCDTrackingMatchesSetAppInstance(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 62) + "-b"
	cases := []struct {
		name, doc   string
		owner       applier.Owner
		annotations map[string]string
		labels      map[string]string
	}{
		{name: "annotation, core group",
			doc:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\n",
			owner:       applier.Owner{Name: "app", Tracking: TrackingAnnotation, Destination: "dest"},
			annotations: map[string]string{TrackingIDAnnotation: "app:/ConfigMap:shop/web"}},
		{name: "unset tracking is annotation (Argo CD 3)",
			doc:         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, labels: {a: b}}\n",
			owner:       applier.Owner{Name: "app", Destination: "dest"},
			annotations: map[string]string{TrackingIDAnnotation: "app:apps/Deployment:shop/web"},
			labels:      map[string]string{"a": "b"}},
		{name: "cluster-scoped carries the destination namespace",
			doc:         "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n",
			owner:       applier.Owner{Name: "app", Tracking: TrackingAnnotation, Destination: "dest"},
			annotations: map[string]string{TrackingIDAnnotation: "app:rbac.authorization.k8s.io/ClusterRole:dest/reader"}},
		{name: "app outside Argo CD's namespace",
			doc:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\n",
			owner:       applier.Owner{Name: "app", Namespace: "team", Tracking: TrackingAnnotation},
			annotations: map[string]string{TrackingIDAnnotation: "team_app:/ConfigMap:shop/web"}},
		{name: "installation id removed",
			doc:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop, annotations: {argocd.argoproj.io/installation-id: x, k: v}}\n",
			owner:       applier.Owner{Name: "app"},
			annotations: map[string]string{TrackingIDAnnotation: "app:/ConfigMap:shop/web", "k": "v"}},
		{name: "label only, not truncated",
			doc:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\n",
			owner:  applier.Owner{Name: long + "x", Tracking: TrackingLabel, InstanceLabel: "app.kubernetes.io/instance"},
			labels: map[string]string{"app.kubernetes.io/instance": long + "x"}},
		{name: "annotation+label truncates the label to 63 ending alphanumeric",
			doc:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\n",
			owner:       applier.Owner{Name: long + "x", Tracking: TrackingAnnotationAndLabel},
			annotations: map[string]string{TrackingIDAnnotation: long + "x:/ConfigMap:shop/web"},
			labels:      map[string]string{"app.kubernetes.io/instance": strings.Repeat("a", 62)}},
		{name: "custom label key",
			doc:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\n",
			owner:  applier.Owner{Name: "app", Tracking: TrackingLabel, InstanceLabel: "argocd.argoproj.io/instance"},
			labels: map[string]string{"argocd.argoproj.io/instance": "app"}},
		{name: "CRDs are not tracked",
			doc:   "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n",
			owner: applier.Owner{Name: "app", Tracking: TrackingAnnotationAndLabel}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			obj := argoObj(t, c.doc)
			if _, err := track(obj, nil, c.owner); err != nil {
				t.Fatal(err)
			}
			if got := obj.GetAnnotations(); !equalMaps(got, c.annotations) {
				t.Errorf("annotations = %v, want %v", got, c.annotations)
			}
			if got := obj.GetLabels(); !equalMaps(got, c.labels) {
				t.Errorf("labels = %v, want %v", got, c.labels)
			}
		})
	}
}

func TestArgoCDLegacyLabelAlsoLabelsPodTemplates(t *testing.T) {
	t.Parallel()
	obj := argoObj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {template: {metadata: {labels: {app: web}}}}\n")
	if _, err := track(obj, nil, applier.Owner{Name: "app", Tracking: TrackingLabel, InstanceLabel: legacyLabel}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", "labels")
	if want := map[string]string{"app": "web", legacyLabel: "app"}; !equalMaps(got, want) {
		t.Errorf("template labels = %v, want %v", got, want)
	}
}

func TestArgoCDTruncateLabelFailsOnlyWhenNothingAlphanumericIsLeft(t *testing.T) {
	t.Parallel()
	if _, err := truncateLabel(strings.Repeat("-", 64)); err == nil {
		t.Error("a label of dashes was truncated without error")
	}
	if got, _ := truncateLabel("short-"); got != "short-" {
		t.Errorf("a value within the limit was changed to %q", got)
	}
}

func TestArgoCDAppliersWriteAsArgoCDController(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		applier applier.Applier
		method  applier.Method
		force   bool
	}{{New(), applier.ClientSide, false}, {NewServerSide(), applier.ServerSide, true}} {
		s := c.applier.Sending()
		if m := s.ManagerFor("mine"); m != FieldManager || s.Method != c.method || s.Force != c.force {
			t.Errorf("%s: manager %s, method %v, force %v", c.applier.Name(), m, s.Method, s.Force)
		}
		if s.Validation() != metav1.FieldValidationWarn {
			t.Errorf("%s: sends fieldValidation %s, Argo CD sends none (the server's Warn)", c.applier.Name(), s.Validation())
		}
	}
}

func TestArgoCDDropsTheLastAppliedAnnotationItsMigrationLeavesUnowned(t *testing.T) {
	t.Parallel()
	live := argoObj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\n")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: applier.ClientSideFieldManager, Operation: metav1.ManagedFieldsOperationUpdate}})
	merged := argoObj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{}', k: v}}\n")
	merged.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:k":{}}}}`)}}})
	dropLastApplied(merged, live)
	if got := merged.GetAnnotations(); !equalMaps(got, map[string]string{"k": "v"}) {
		t.Errorf("annotations = %v", got)
	}

	owned := merged.DeepCopy()
	owned.SetAnnotations(map[string]string{applier.LastAppliedAnnotation: "{}"})
	owned.SetManagedFields(append(owned.GetManagedFields(), metav1.ManagedFieldsEntry{Manager: "someone", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`)}}))
	dropLastApplied(owned, live)
	if _, ok := owned.GetAnnotations()[applier.LastAppliedAnnotation]; !ok {
		t.Error("an annotation another manager owns was dropped")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestArgoCDReconcileOwnsWhatItAddedAndThePatchLeft(t *testing.T) {
	t.Parallel()
	const role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r, namespace: ns%s}\nrules: %s\n"
	const binding = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b, namespace: ns%s}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}\nsubjects: %s\n"
	get, getList := `[{apiGroups: [""], resources: [pods], verbs: [get]}]`, `[{apiGroups: [""], resources: [pods], verbs: [get, list]}]`
	one, two := "[{kind: User, name: a}]", "[{kind: User, name: a}, {kind: User, name: b}]"
	cases := []struct {
		name, live, head string
		reconciled       string // the reconcile manager's fields, "" for none
	}{
		{"an added label, not the rules the patch rewrote", fmt.Sprintf(role, "", get), fmt.Sprintf(role, ", labels: {tier: a}", getList),
			`{"f:metadata":{"f:labels":{".":{},"f:tier":{}}}}`},
		{"added subjects the patch kept", fmt.Sprintf(binding, "", one), fmt.Sprintf(binding, "", two), `{"f:subjects":{}}`},
		{"nothing missing", fmt.Sprintf(role, "", getList), fmt.Sprintf(role, "", get), ""},
		{"protected", fmt.Sprintf(binding, ", annotations: {rbac.authorization.kubernetes.io/autoupdate: 'false'}", one),
			fmt.Sprintf(binding, ", annotations: {rbac.authorization.kubernetes.io/autoupdate: 'false'}", two), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			live, merged := argoObj(t, c.live), argoObj(t, c.head)
			modified, err := clientside.ModifiedConfiguration(merged)
			if err != nil {
				t.Fatal(err)
			}
			ann := merged.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[applier.LastAppliedAnnotation] = string(modified)
			merged.SetAnnotations(ann)
			all := `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:tier":{}}},"f:rules":{},"f:subjects":{}}`
			merged.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(all)}}})
			reconciledFirst(merged, live)
			got := ""
			for _, e := range merged.GetManagedFields() {
				if e.Manager == reconcileManager {
					got = string(e.FieldsV1.Raw)
				}
			}
			if got != c.reconciled {
				t.Errorf("the reconcile owns %s, want %s", got, c.reconciled)
			}
		})
	}
}

func TestArgoCDObjectSyncOptionOverridesTheApplications(t *testing.T) {
	t.Parallel()
	for option, want := range map[string]applier.Applier{
		"":                                     nil,
		"ServerSideApply=true":                 NewServerSide(),
		" Prune=false , ServerSideApply=false": New(),
		"ServerSideApply=true,ServerSideApply=false": New(),
		"ServerSideApply=True":                       nil,
	} {
		obj := argoObj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n")
		obj.SetAnnotations(map[string]string{syncOptions: option})
		if got := New().For(obj); got != want {
			t.Errorf("sync-options %q: applier %v, want %v", option, got, want)
		}
	}
}
