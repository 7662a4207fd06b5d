package ephemeral

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/render"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDsFrom reads a live cluster's CustomResourceDefinitions, to load into ephemeral
// servers (--crds-from-context): their spec, name, labels and annotations, not what
// the cluster recorded about them.
func CRDsFrom(ctx context.Context, cfg *rest.Config, where string) ([]render.Object, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	list, err := dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list the CustomResourceDefinitions of %s: %w", where, err)
	}
	var out []render.Object
	for _, item := range list.Items {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": item.GetName()}, "spec": runtime.DeepCopyJSONValue(item.Object["spec"])}}
		// No conversion webhook runs in an ephemeral server: versions convert as with
		// strategy None (only apiVersion changes).
		if strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "conversion", "strategy"); strategy == "Webhook" {
			_ = unstructured.SetNestedField(obj.Object, map[string]any{"strategy": "None"}, "spec", "conversion")
		}
		obj.SetLabels(item.GetLabels())
		annotations := item.GetAnnotations()
		delete(annotations, "kubectl.kubernetes.io/last-applied-configuration")
		obj.SetAnnotations(annotations)
		out = append(out, render.Object{Obj: obj, Source: where})
	}
	return out, nil
}
