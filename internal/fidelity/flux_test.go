package fidelity

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	fluxapplier "github.com/drift-gitops/drift/internal/applier/flux"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// fluxApplier applies as kustomize-controller does, with fluxcd/pkg/ssa v0.77.0's
// ResourceManager: NewResourceManager and SetOwnerLabels as in reconcile, then the
// ApplyOptions that apply() builds (internal/controller/kustomization_controller.go,
// kustomize-controller commit 186fb3b2) and ApplyAllStaged.
func fluxApplier(owner applier.Owner) realApplier {
	return realApplier{
		profile:    "flux",
		owner:      owner,
		serverSide: true,
		apply: func(t *testing.T, ns, step string, objs []*unstructured.Unstructured) {
			t.Helper()
			c, err := client.New(env.Config, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			manager := ssa.NewResourceManager(c, polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{}),
				ssa.Owner{Field: fluxapplier.FieldManager, Group: "kustomize.toolkit.fluxcd.io"})
			objects := make([]*unstructured.Unstructured, len(objs))
			for i, o := range objs {
				objects[i] = o.DeepCopy()
			}
			manager.SetOwnerLabels(objects, owner.Name, owner.Namespace)
			if err := normalize.UnstructuredList(objects); err != nil {
				t.Fatal(err)
			}
			if _, err := manager.ApplyAllStaged(context.Background(), objects, fluxApplyOptions()); err != nil {
				t.Fatalf("flux %s: %v", step, err)
			}
		},
	}
}

// fluxApplyOptions are apply()'s options for a Kustomization without spec.force,
// spec.ignore or --override-manager, and the controller's default feature gates.
func fluxApplyOptions() ssa.ApplyOptions {
	const group = "kustomize.toolkit.fluxcd.io"
	opts := ssa.DefaultApplyOptions()
	opts.ExclusionSelector = map[string]string{group + "/reconcile": "disabled", group + "/ssa": "Ignore"}
	opts.IfNotPresentSelector = map[string]string{group + "/ssa": "IfNotPresent"}
	opts.ForceSelector = map[string]string{group + "/force": "enabled"}
	opts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{corev1.LastAppliedConfigAnnotation, group + "/checksum", "fluxcd.io/sync-checksum"},
		Labels:      []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: fluxapplier.FieldManager, OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		Exclusions: map[string]string{fmt.Sprintf("%s/ssa", group): "Merge"},
	}
	return opts
}

func TestFidelityFlux(t *testing.T) {
	runCell(t, fluxApplier(applier.Owner{Name: "apps", Namespace: "flux-system"}))
}

// TestFidelityFluxHonoursSSAAnnotationsAndCleanup: objects kustomize-controller
// skips (ssa: IfNotPresent, Ignore), applies without cleanup (ssa: Merge over a
// client-side apply), cleans (a deprecated checksum annotation another tool set),
// or leaves alone because the dry run shows no drift (another tool wrote exactly
// what the repository has: kustomize-controller does not take its fields).
func TestFidelityFluxHonoursSSAAnnotationsAndCleanup(t *testing.T) {
	const ns = "fidelity-flux-ssa"
	owner := applier.Owner{Name: "apps", Namespace: "flux-system"}
	flux := fluxApplier(owner)
	cm := func(name, meta, data string) *unstructured.Unstructured {
		return decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: NS"+meta+"}\ndata: "+data+"\n", ns)
	}
	const labels = "kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system"
	kubectl(t, "apply", "-f", "-", "<<apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	flux.apply(t, ns, "base", []*unstructured.Unstructured{cm("if-not-present", ", annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}", `{a: "1"}`)})
	for _, o := range []*unstructured.Unstructured{cm("ignored", "", `{a: "1"}`), cm("merged", ", labels: {drop: x}", `{a: "1", b: "2"}`)} {
		data, _ := json.Marshal(o.Object)
		kubectl(t, "apply", "-f", "-", "<<"+string(data))
	}
	direct := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	for _, o := range []*unstructured.Unstructured{
		cm("checksum", ", annotations: {kustomize.toolkit.fluxcd.io/checksum: abc}", `{a: "1"}`),
		cm("same", ", labels: {"+labels+"}", `{a: "1"}`),
	} {
		if _, err := direct.Create(context.Background(), o, metav1.CreateOptions{FieldManager: "legacy-tool"}); err != nil {
			t.Fatal(err)
		}
	}
	head := []*unstructured.Unstructured{
		cm("if-not-present", ", annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}", `{a: "2"}`),
		cm("ignored", ", annotations: {kustomize.toolkit.fluxcd.io/ssa: Ignore}", `{a: "2"}`),
		cm("merged", ", annotations: {kustomize.toolkit.fluxcd.io/ssa: Merge}", `{a: "1"}`),
		cm("checksum", "", `{a: "1"}`),
		cm("same", "", `{a: "1"}`),
	}
	fluxCheck(t, ns, flux, head)
}

// fluxCheck predicts head under the flux profile, applies it with flux, and
// requires every prediction to equal the applied object, and a second prediction
// to show no change.
func fluxCheck(t *testing.T, ns string, flux realApplier, head []*unstructured.Unstructured) {
	ctx := context.Background()
	clients, err := kube.NewClients(env.Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	a := appliersOf(t, flux.profile)
	predict := func() []dryrun.Result {
		objs := make([]render.Object, len(head))
		for i, o := range head {
			objs[i] = render.Object{Obj: o.DeepCopy(), Source: "workload.yaml", Doc: i + 1}
		}
		return dryrun.Run(ctx, clients, objs, dryrun.Options{Applier: a, Appliers: appliers.All(), Owner: flux.owner, Namespace: ns})
	}
	predicted := predict()
	flux.apply(t, ns, "head", head)
	direct := dynamic.NewForConfigOrDie(env.Config)
	for _, r := range predicted {
		if r.Err != nil {
			t.Errorf("%s: drift could not predict it: %s", r.ID.Display(), r.Err.Message)
			continue
		}
		live, err := liveOf(ctx, clients, direct, r)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := comparable(r.Merged, r.Live == nil), comparable(live, r.Live == nil); got != want {
			t.Errorf("%s: predicted and applied differ:\n%s", r.ID.Display(), lineDiff(got, want))
		}
	}
	for _, r := range predict() {
		if got, want := shown(r.Merged), shown(r.Live); r.Err != nil || got != want {
			t.Errorf("%s: second run after the apply reports a change or fails (%v):\n%s", r.ID.Display(), r.Err, lineDiff(want, got))
		}
	}
}

// TestFidelityFluxRefusesAnObjectWithoutNamespace: kustomize-controller applies a
// namespaced object that names no namespace (a Kustomization without
// targetNamespace) with fluxcd/pkg/ssa, which refuses it, and with it the whole
// set, as "namespace not specified"; drift's prediction for such a Kustomization
// (dryrun.Options.RequireNamespace) is the same refusal, never an object in the
// default namespace.
func TestFidelityFluxRefusesAnObjectWithoutNamespace(t *testing.T) {
	owner := applier.Owner{Name: "apps", Namespace: "flux-system"}
	cm := decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: no-namespace}\ndata: {a: b}\n", "")
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	manager := ssa.NewResourceManager(c, polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{}),
		ssa.Owner{Field: fluxapplier.FieldManager, Group: "kustomize.toolkit.fluxcd.io"})
	objects := []*unstructured.Unstructured{cm.DeepCopy()}
	manager.SetOwnerLabels(objects, owner.Name, owner.Namespace)
	_, applyErr := manager.ApplyAllStaged(context.Background(), objects, fluxApplyOptions())
	if applyErr == nil || !strings.Contains(applyErr.Error(), "namespace not specified") {
		t.Fatalf("fluxcd/pkg/ssa: %v, want namespace not specified", applyErr)
	}
	clients, err := kube.NewClients(env.Config, 1)
	if err != nil {
		t.Fatal(err)
	}
	results := dryrun.Run(context.Background(), clients, []render.Object{{Obj: cm.DeepCopy(), Source: "cm.yaml", Doc: 1}},
		dryrun.Options{Applier: appliersOf(t, "flux"), Appliers: appliers.All(), Owner: owner, RequireNamespace: true})
	if len(results) != 1 || results[0].Err == nil || results[0].Err.Reason != reason.Invalid || !strings.Contains(results[0].Err.Message, "namespace not specified") {
		t.Errorf("drift's prediction: %+v", results)
	}
}
