package flux

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier"
)

var fluxOwner = applier.Owner{Name: "apps", Namespace: "flux-system"}

func TestFluxNeedsTheKustomizationName(t *testing.T) {
	t.Parallel()
	obj := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\n")
	_, err := New().Prepare(obj, nil, applier.Owner{Namespace: "flux-system"})
	if err == nil || !strings.Contains(err.Error(), "set flux.name") {
		t.Fatalf("want an error asking for flux.name, got %v", err)
	}
}

// fluxPrepare must send what kustomize-controller sends: ResourceManager's owner
// labels and pkg/ssa's normalization, compared with the library's own result.
func TestFluxPrepareSendsWhatKustomizeControllerSends(t *testing.T) {
	t.Parallel()
	docs := []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, labels: {app: web}}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: web, ports: [{containerPort: 80}]}]\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}\nstringData: {user: admin}\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader, namespace: shop}\nrules: []\n",
		"apiVersion: fidelity.drift.dev/v1\nkind: Widget\nmetadata: {name: gear, namespace: shop}\nspec: {size: 3}\nstatus: {ready: true}\n",
	}
	for _, doc := range docs {
		got, want := obj(t, doc), obj(t, doc)
		t.Run(got.GetKind(), func(t *testing.T) {
			t.Parallel()
			if skip, err := New().Prepare(got, nil, fluxOwner); skip != "" || err != nil {
				t.Fatalf("skip %q, err %v", skip, err)
			}
			objs := []*unstructured.Unstructured{want}
			ssa.NewResourceManager(nil, nil, ssa.Owner{Field: FieldManager, Group: "kustomize.toolkit.fluxcd.io"}).
				SetOwnerLabels(objs, fluxOwner.Name, fluxOwner.Namespace)
			if err := normalize.UnstructuredList(objs); err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got.Object)
			w, _ := json.Marshal(want.Object)
			if string(g) != string(w) {
				t.Errorf("prepared\n%s\nkustomize-controller sends\n%s", g, w)
			}
		})
	}
}

func TestFluxSkipsWhatItsSelectorsExclude(t *testing.T) {
	t.Parallel()
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop%s}\n"
	live := obj(t, strings.Replace(cm, "%s", ", uid: u1", 1))
	cases := []struct {
		name, meta, liveMeta string
		exists, skipped      bool
	}{
		{name: "plain", exists: true},
		{name: "ssa Ignore", meta: "annotations: {kustomize.toolkit.fluxcd.io/ssa: Ignore}", skipped: true},
		{name: "ssa ignore, any case, as a label", meta: "labels: {kustomize.toolkit.fluxcd.io/ssa: ignore}", skipped: true},
		{name: "ssa Ignore on the live object", liveMeta: "annotations: {kustomize.toolkit.fluxcd.io/ssa: Ignore}", exists: true, skipped: true},
		{name: "reconcile disabled", meta: "annotations: {kustomize.toolkit.fluxcd.io/reconcile: disabled}", skipped: true},
		{name: "IfNotPresent and present", meta: "annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}", exists: true, skipped: true},
		{name: "IfNotPresent and absent", meta: "annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}"},
		{name: "Merge is applied", meta: "annotations: {kustomize.toolkit.fluxcd.io/ssa: Merge}", exists: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			meta := ""
			if c.meta != "" {
				meta = ", " + c.meta
			}
			var l *unstructured.Unstructured
			if c.exists || c.liveMeta != "" {
				l = live.DeepCopy()
				if c.liveMeta != "" {
					l = obj(t, strings.Replace(cm, "%s", ", uid: u1, "+c.liveMeta, 1))
				}
			}
			skip, err := New().Prepare(obj(t, strings.Replace(cm, "%s", meta, 1)), l, fluxOwner)
			if err != nil {
				t.Fatal(err)
			}
			if (skip != "") != c.skipped {
				t.Errorf("skip = %q, want skipped %v", skip, c.skipped)
			}
		})
	}
}

// The entries whose fields move to kustomize-controller are those pkg/ssa's
// PatchReplaceFieldsManagers merges with the FieldManagers apply() passes.
func TestFluxMigratesTheEntriesCleanupMerges(t *testing.T) {
	t.Parallel()
	managers := []ssa.FieldManager{
		{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
		{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
		{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
		{Name: FieldManager, OperationType: metav1.ManagedFieldsOperationUpdate},
	}
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "kubectl", Operation: apply}, {Manager: "kubectl-last-applied", Operation: apply},
		{Manager: "kubectl-client-side-apply", Operation: update}, {Manager: "kubectl-label", Operation: update},
		{Manager: "kubectl-edit", Operation: update}, {Manager: "kubectl", Operation: update, Subresource: "scale"},
		{Manager: "before-first-apply", Operation: update}, {Manager: FieldManager, Operation: update},
		{Manager: "kube-controller-manager", Operation: update}, {Manager: "helm", Operation: update},
		{Manager: "argocd-controller", Operation: apply}, {Manager: "before-first-apply", Operation: apply},
	}
	merged := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n")
	for _, e := range entries {
		e.APIVersion, e.FieldsType, e.FieldsV1 = "v1", "FieldsV1", &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:a":{}}}`)}
		obj := merged.DeepCopy()
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{e})
		patches, err := ssa.PatchReplaceFieldsManagers(obj, managers, FieldManager)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fluxMigrated(merged, e), len(patches) > 0; got != want {
			t.Errorf("%s %s %s: migrated %v, pkg/ssa merges it: %v", e.Manager, e.Operation, e.Subresource, got, want)
		}
	}
	ssaMerge := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, annotations: {kustomize.toolkit.fluxcd.io/ssa: merge}}\n")
	if fluxMigrated(ssaMerge, entries[2]) {
		t.Error("ssa: Merge excludes the object from cleanup, so nothing migrates")
	}
}

func fluxEntry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestFluxAfterRemovesTheCleanedMetadataUnlessApplied(t *testing.T) {
	t.Parallel()
	const doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop, resourceVersion: \"7\", annotations: {kustomize.toolkit.fluxcd.io/checksum: abc, keep: k}, labels: {fluxcd.io/sync-gc-mark: x}}\ndata: {a: \"1\"}\n"
	other := fluxEntry("legacy", metav1.ManagedFieldsOperationUpdate,
		`{"f:metadata":{"f:annotations":{"f:keep":{},"f:kustomize.toolkit.fluxcd.io/checksum":{}},"f:labels":{"f:fluxcd.io/sync-gc-mark":{}}}}`)
	own := fluxEntry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:data":{"f:a":{}}}`)

	live := obj(t, doc)
	live.SetManagedFields([]metav1.ManagedFieldsEntry{other})
	merged := live.DeepCopy()
	merged.SetManagedFields([]metav1.ManagedFieldsEntry{other, own})
	New().After(merged, live, fluxOwner)
	if got := merged.GetAnnotations(); len(got) != 1 || got["keep"] != "k" {
		t.Errorf("annotations = %v, want only keep", got)
	}
	if got := merged.GetLabels(); got != nil {
		t.Errorf("labels = %v, want none", got)
	}
	mf := merged.GetManagedFields()
	if len(mf) != 2 || string(mf[0].FieldsV1.Raw) != `{"f:metadata":{"f:annotations":{"f:keep":{}}}}` {
		t.Errorf("the removed keys stay in managedFields: %+v", mf)
	}

	// The applied object sets the checksum again: it stays, as the apply writes it.
	merged = live.DeepCopy()
	reapplied := fluxEntry(FieldManager, metav1.ManagedFieldsOperationApply,
		`{"f:data":{"f:a":{}},"f:metadata":{"f:annotations":{"f:kustomize.toolkit.fluxcd.io/checksum":{}}}}`)
	merged.SetManagedFields([]metav1.ManagedFieldsEntry{other, reapplied})
	New().After(merged, live, fluxOwner)
	if _, ok := merged.GetAnnotations()["kustomize.toolkit.fluxcd.io/checksum"]; !ok {
		t.Error("an annotation the applied object sets was removed")
	}

	// ssa: Merge skips cleanup; nothing drifted, so nothing is applied at all.
	live = obj(t, strings.Replace(doc, "keep: k", "kustomize.toolkit.fluxcd.io/ssa: Merge", 1))
	live.SetManagedFields([]metav1.ManagedFieldsEntry{other})
	merged = live.DeepCopy()
	merged.SetManagedFields([]metav1.ManagedFieldsEntry{other, own})
	New().After(merged, live, fluxOwner)
	if _, ok := merged.GetAnnotations()["kustomize.toolkit.fluxcd.io/checksum"]; !ok || len(merged.GetManagedFields()) != 1 {
		t.Errorf("ssa: Merge: want the live object untouched, got %v %+v", merged.GetAnnotations(), merged.GetManagedFields())
	}
}

// ApplyAll applies nothing when cleanup changes nothing and the dry run does not
// differ from the live object: kustomize-controller does not take ownership then.
func TestFluxAfterAppliesNothingWhenNothingDrifted(t *testing.T) {
	t.Parallel()
	live := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop, resourceVersion: \"7\", labels: {kustomize.toolkit.fluxcd.io/name: apps}}\ndata: {a: \"1\"}\n")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{fluxEntry("helm", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:a":{}}}`)})
	merged := live.DeepCopy()
	merged.SetManagedFields(append(merged.GetManagedFields(), fluxEntry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:data":{"f:a":{}}}`)))
	New().After(merged, live, fluxOwner)
	if len(merged.GetManagedFields()) != 1 {
		t.Errorf("no apply happens, so no kustomize-controller entry: %+v", merged.GetManagedFields())
	}

	merged = live.DeepCopy()
	_ = unstructured.SetNestedField(merged.Object, "2", "data", "a")
	New().After(merged, live, fluxOwner)
	if v, _, _ := unstructured.NestedString(merged.Object, "data", "a"); v != "2" {
		t.Error("a drifted object is applied")
	}
}

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}
