package ephemeral

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDsFrom reads a live cluster's CustomResourceDefinitions, to load into ephemeral
// servers (--crds-from-context), page by page through kube's retry policy: their
// spec, name, labels and annotations, not what the cluster recorded about them.
func CRDsFrom(ctx context.Context, c *kube.Clients, where string) ([]render.Object, error) {
	var items []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
			return c.Dynamic.Resource(crdGVR).List(ctx, opts)
		})
		if err != nil {
			return nil, fmt.Errorf("cannot list the CustomResourceDefinitions of %s: %w", where, err)
		}
		items = append(items, page.Items...)
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			break
		}
	}
	var out []render.Object
	for _, item := range items {
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
