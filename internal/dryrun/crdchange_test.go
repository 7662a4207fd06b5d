package dryrun

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/kubectl"
	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

var crdGroups atomic.Int32

const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.GROUP}
spec:
  group: GROUP
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`

// gadgetCRDv2 adds spec.color, defaulted, and spec.mode.
const gadgetCRDv2 = gadgetCRD + `              color: {type: string, default: blue}
              mode: {type: string}
`

// gadgetCRDNewVersion serves v2 too, with spec.color and spec.mode; v1 stays the
// storage version.
const gadgetCRDNewVersion = gadgetCRD + `  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string, default: blue}
              mode: {type: string}
`

const gadgetStatus = `          status:
            type: object
            properties:
              ready: {type: boolean}
`

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

// gadgets creates a CRD (gadgetCRD when crd is empty) in a group of its own, waits
// until its kind is served, and returns the group and a client for gadgets in
// namespace default.
func gadgets(t *testing.T, crd ...string) (string, dynamic.ResourceInterface) {
	t.Helper()
	group := fmt.Sprintf("g%d.crdchange.example.com", crdGroups.Add(1))
	doc := gadgetCRD
	if len(crd) > 0 {
		doc = crd[0]
	}
	applyCRD(t, strings.ReplaceAll(doc, "GROUP", group), "size")
	return group, dynamic.NewForConfigOrDie(testEnv(t).Config).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}).Namespace("default")
}

// applyCRD applies a CRD for real and waits until the server serves it with the
// property prop in its schema.
func applyCRD(t *testing.T, doc, prop string) {
	t.Helper()
	crd := fromYAML(t, doc)
	direct := dynamic.NewForConfigOrDie(testEnv(t).Config).Resource(crdGVR)
	body, _ := crd.MarshalJSON()
	force := true
	ctx := context.Background()
	if _, err := direct.Patch(ctx, crd.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "test", Force: &force}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		live, err := direct.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
		for _, c := range conds {
			c, _ := c.(map[string]any)
			if c["type"] == "Established" && c["status"] == "True" {
				versions, _, _ := unstructured.NestedSlice(live.Object, "spec", "versions")
				_, found, _ := unstructured.NestedMap(versions[len(versions)-1].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", prop)
				return found, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established with %s: %v", crd.GetName(), prop, err)
	}
}

func applyGadget(t *testing.T, res dynamic.ResourceInterface, obj *unstructured.Unstructured, manager string, dryRun bool) (*unstructured.Unstructured, error) {
	t.Helper()
	body, _ := obj.MarshalJSON()
	// Forced: on a conflict with another manager drift predicts a forced apply, with a
	// warning.
	force := true
	opts := metav1.PatchOptions{FieldManager: manager, FieldValidation: "Strict", Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return res.Patch(context.Background(), obj.GetName(), types.ApplyPatchType, body, opts)
}

func gadget(group, name, spec string) string {
	return gadgetAt(group, "v1", name, spec)
}

// gadgetAt is a gadget's YAML; spec may go on with other top-level fields (status).
func gadgetAt(group, version, name, spec string) string {
	return "apiVersion: " + group + "/" + version + "\nkind: Gadget\nmetadata: {name: " + name + ", namespace: default}\nspec: " + spec + "\n"
}

func runObjects(t *testing.T, docs ...string) []Result {
	t.Helper()
	return runObjectsAs(t, nil, docs...)
}

// runObjectsAs previews docs as a applies them (kubectl-server-side when nil).
func runObjectsAs(t *testing.T, a applier.Applier, docs ...string) []Result {
	t.Helper()
	clients, err := kube.NewClients(testEnv(t).Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]render.Object, len(docs))
	for i, d := range docs {
		objs[i] = render.Object{Obj: fromYAML(t, d), Source: "change.yaml", Doc: i + 1}
	}
	if a == nil {
		a = kubectlssa.New()
	}
	return Run(context.Background(), clients, objs, Options{Pending: PendingFrom(objs), Applier: a})
}

func warned(r Result, why reason.Reason) bool {
	for _, w := range r.Warnings {
		if w.Reason == why {
			return true
		}
	}
	return false
}

func TestCustomResourceOfAChangedCRDIsPredictedAsTheNewCRDServesIt(t *testing.T) {
	for _, c := range []struct {
		name string
		// crd is the CRD as the change makes it; creator applied the live gadget at v1.
		crd, creator, live string
		// applied is the gadget's spec in the change, at version (v1 when empty).
		applied, version string
		// want is the spec after the apply; wantErr what the server answers instead.
		want    map[string]any
		wantErr string
	}{
		{name: "new field and new default", crd: gadgetCRDv2, creator: applier.KubectlFieldManager, live: "{size: 3}", applied: "{size: 3, mode: fast}",
			want: map[string]any{"size": int64(3), "mode": "fast", "color": "blue"}},
		// Another manager owns size, so only pruning by the new schema removes it.
		{name: "removed field", crd: strings.Replace(gadgetCRDv2, "              size: {type: integer}\n", "", 1), creator: "someone-else", live: "{size: 3}", applied: "{mode: fast}",
			want: map[string]any{"mode": "fast", "color": "blue"}},
		// With the status subresource, an apply to the main resource leaves status.
		{name: "status subresource", crd: strings.Replace(gadgetCRDv2, "    storage: true\n", "    storage: true\n    subresources: {status: {}}\n", 1) + gadgetStatus,
			creator: applier.KubectlFieldManager, live: "{size: 3}", applied: "{size: 3, mode: fast}\nstatus: {ready: true}",
			want: map[string]any{"size": int64(3), "mode": "fast", "color": "blue"}},
		{name: "created", crd: gadgetCRDv2, applied: "{mode: fast}", want: map[string]any{"mode": "fast", "color": "blue"}},
		// v1 stays the storage version, converted without a webhook: what v1 does not
		// know is lost on the way to storage, the new default too.
		{name: "new version", crd: gadgetCRDNewVersion, creator: "someone-else", live: "{size: 3}", applied: "{size: 4}", version: "v2",
			want: map[string]any{"size": int64(4)}},
		// Server-side apply converts the applied object to the version other managers
		// applied at, where mode is unknown: the server refuses, and so does drift.
		{name: "new version, new field", crd: gadgetCRDNewVersion, creator: "someone-else", live: "{size: 3}", applied: "{size: 3, mode: fast}", version: "v2",
			wantErr: "failed to convert new object: .spec.mode: field not declared in schema"},
		{name: "new version, applied before at v1", crd: gadgetCRDNewVersion, creator: applier.KubectlFieldManager, live: "{size: 3}", applied: "{size: 3, mode: fast}", version: "v2",
			wantErr: "failed to convert merged object to last applied version: .spec.mode: field not declared in schema"},
	} {
		t.Run(c.name, func(t *testing.T) {
			group, v1 := gadgets(t)
			if c.live != "" {
				if _, err := applyGadget(t, v1, fromYAML(t, gadget(group, "g", c.live)), c.creator, false); err != nil {
					t.Fatal(err)
				}
			}
			if c.version == "" {
				c.version = "v1"
			}
			crd, cr := strings.ReplaceAll(c.crd, "GROUP", group), gadgetAt(group, c.version, "g", c.applied)
			r := runObjects(t, crd, cr)[1]
			if c.wantErr != "" {
				if r.Err == nil || !strings.Contains(r.Err.Message, c.wantErr) {
					t.Fatalf("want an error with %q, got %+v", c.wantErr, r.Err)
				}
			} else {
				checkPrediction(t, r, c.live, c.want)
			}

			// Now for real: the new CRD, then the same apply, as the same manager.
			var predicted map[string]any
			if r.Merged != nil {
				predicted, _, _ = unstructured.NestedMap(r.Merged.Object, "spec")
			}
			real, err := applyAfterCRD(t, group, c.version, crd, cr, predicted, c.wantErr)
			switch {
			case c.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("the server answered %v, drift predicted %s", err, r.Err.Message)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got, want := withoutMetadata(real.Object), withoutMetadata(r.Merged.Object); !apiequality.Semantic.DeepEqual(got, want) || real.GetGeneration() != r.Merged.GetGeneration() {
				t.Fatalf("the cluster has %v (generation %d); drift predicted %v (generation %d)", got, real.GetGeneration(), want, r.Merged.GetGeneration())
			}
			if owned, predictedOwned := ownedBy(real, applier.KubectlFieldManager), ownedBy(r.Merged, applier.KubectlFieldManager); owned != predictedOwned {
				t.Fatalf("the cluster has %s owning %s; drift predicted %s", applier.KubectlFieldManager, owned, predictedOwned)
			}
		})
	}
}

func checkPrediction(t *testing.T, r Result, live string, want map[string]any) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("unexpected error: %+v", r.Err)
	}
	if !warned(r, reason.CRDChanged) {
		t.Errorf("want a %s warning, got %+v", reason.CRDChanged, r.Warnings)
	}
	if predicted, _, _ := unstructured.NestedMap(r.Merged.Object, "spec"); !apiequality.Semantic.DeepEqual(predicted, want) {
		t.Fatalf("predicted spec %v, want %v", predicted, want)
	}
	switch {
	case live == "" && r.Live != nil:
		t.Fatalf("want no live gadget, got %v", r.Live)
	case live != "":
		if got, _, _ := unstructured.NestedMap(r.Live.Object, "spec"); !apiequality.Semantic.DeepEqual(got, map[string]any{"size": int64(3)}) {
			t.Fatalf("want the live gadget as read, got %v", got)
		}
	}
}

// applyAfterCRD applies the CRD for real, waits until the custom resource handler
// serves it (it follows the CRD a moment later: until then a dry run of the gadget
// answers by the old schema), then applies the gadget for real as drift's field
// manager. A wrong prediction fails here, with the server's last answer.
func applyAfterCRD(t *testing.T, group, version, crd, cr string, spec map[string]any, wantErr string) (*unstructured.Unstructured, error) {
	t.Helper()
	applyCRD(t, crd, "mode")
	res := dynamic.NewForConfigOrDie(testEnv(t).Config).Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: "gadgets"}).Namespace("default")
	var last any
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		obj, err := applyGadget(t, res, fromYAML(t, cr), applier.KubectlFieldManager, true)
		if err != nil {
			last = err
			return wantErr != "" && strings.Contains(err.Error(), wantErr), nil
		}
		got, _, _ := unstructured.NestedMap(obj.Object, "spec")
		last = got
		return wantErr == "" && apiequality.Semantic.DeepEqual(got, spec), nil
	})
	if err != nil {
		t.Fatalf("the server never answered as drift predicted (%v, error %q): %v; last answer: %v", spec, wantErr, err, last)
	}
	return applyGadget(t, res, fromYAML(t, cr), applier.KubectlFieldManager, false)
}

func TestCustomResourceOfAnUnchangedCRDIsDryRunByTheServer(t *testing.T) {
	// Rendered as it is live, defaults included.
	group, res := gadgets(t, gadgetCRDv2)
	crd := strings.ReplaceAll(gadgetCRDv2, "GROUP", group)
	if _, err := applyGadget(t, res, fromYAML(t, gadget(group, "g", "{size: 3}")), applier.KubectlFieldManager, false); err != nil {
		t.Fatal(err)
	}
	r := runObjects(t, crd, gadget(group, "g", "{size: 4, mode: slow}"))[1]
	if r.Err != nil || len(r.Warnings) != 0 {
		t.Fatalf("want the server's dry run without warnings, got %+v %+v", r.Err, r.Warnings)
	}
	want := map[string]any{"size": int64(4), "mode": "slow", "color": "blue"}
	if spec, _, _ := unstructured.NestedMap(r.Merged.Object, "spec"); !apiequality.Semantic.DeepEqual(spec, want) {
		t.Fatalf("predicted spec %v, want %v", spec, want)
	}
}

// A client-side applier's patch is not reproduced under the new schema: the object is
// previewed against the live CRD, and the report says so.
func TestCustomResourceOfAChangedCRDUnderAClientSideApplierIsPreviewedAgainstTheLiveCRDWithAWarning(t *testing.T) {
	group, res := gadgets(t)
	if _, err := applyGadget(t, res, fromYAML(t, gadget(group, "g", "{size: 3}")), applier.KubectlFieldManager, false); err != nil {
		t.Fatal(err)
	}
	r := runObjectsAs(t, kubectl.New(), strings.ReplaceAll(gadgetCRDv2, "GROUP", group), gadget(group, "g", "{size: 4}"))[1]
	if r.Err != nil || !warned(r, reason.CRDChanged) {
		t.Fatalf("want a crd-changed warning and a preview, got %+v %+v", r.Err, r.Warnings)
	}
	for _, w := range r.Warnings {
		if w.Reason == reason.CRDChanged && !strings.Contains(w.Message, "the kubectl applier's patch is previewed against the CRD the cluster serves now") {
			t.Errorf("warning %q does not say the live CRD was used", w.Message)
		}
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(r.Merged.Object, "spec", "color"); ok {
		t.Errorf("the live CRD has no default color, yet the prediction has one: %v", r.Merged.Object["spec"])
	}
}

func TestCustomResourceInvalidUnderTheChangedCRDIsAnErrorNamingIt(t *testing.T) {
	group, res := gadgets(t)
	if _, err := applyGadget(t, res, fromYAML(t, gadget(group, "g", "{size: 3}")), applier.KubectlFieldManager, false); err != nil {
		t.Fatal(err)
	}
	results := runObjects(t, strings.ReplaceAll(gadgetCRDv2, "GROUP", group),
		gadget(group, "g", `{size: "x", mode: fast}`), gadget(group, "typo", "{size: 1, colour: red}"),
		strings.Replace(gadget(group, "lost", "{mode: fast}"), "namespace: default", "namespace: nowhere", 1))
	if lost := results[3]; lost.Err == nil || lost.Err.Reason != reason.NotFound || !strings.Contains(lost.Err.Message, "namespace nowhere does not exist") {
		t.Errorf("lost: want the missing namespace, got %+v", lost.Err)
	}
	for _, c := range []struct {
		r    Result
		want string
	}{
		{results[1], "spec.size"},
		{results[2], `unknown field "spec.colour"`},
	} {
		if c.r.Err == nil || c.r.Err.Reason != reason.Invalid || !strings.Contains(c.r.Err.Message, "CustomResourceDefinition gadgets."+group) ||
			!strings.Contains(c.r.Err.Message, c.want) {
			t.Errorf("%s: want an invalid error naming the CRD and %s, got %+v", c.r.ID.Name, c.want, c.r.Err)
		}
	}
}

func ownedBy(obj *unstructured.Unstructured, manager string) string {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.FieldsV1 != nil {
			return string(mf.FieldsV1.Raw)
		}
	}
	return ""
}

func TestCustomResourceNeedingTheChangedCRDsConversionWebhookIsPreviewedAsBeforeWithAWarning(t *testing.T) {
	group, res := gadgets(t)
	if _, err := applyGadget(t, res, fromYAML(t, gadget(group, "g", "{size: 3}")), applier.KubectlFieldManager, false); err != nil {
		t.Fatal(err)
	}
	crd := strings.ReplaceAll(gadgetCRDNewVersion, "GROUP", group) + `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "https://convert.example.com/convert"}
`
	r := runObjects(t, crd, gadgetAt(group, "v2", "g", "{size: 4}"))[1]
	found := false
	for _, w := range r.Warnings {
		found = found || (w.Reason == reason.CRDChanged && strings.Contains(w.Message, "conversion webhook, which drift does not call"))
	}
	if r.Err != nil || !found {
		t.Fatalf("want the usual preview with a warning about the webhook, got %+v %+v", r.Err, r.Warnings)
	}
}

// withoutMetadata is obj without its metadata, which a real apply and drift's
// prediction write differently (uid, timestamps).
func withoutMetadata(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}
