package dryrun

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// CopyFromAnnotation names the ConfigMap or Secret ("namespace/name") whose data
// flux-operator copies into a ResourceSet's ConfigMap or Secret before applying it.
const CopyFromAnnotation = "fluxcd.controlplane.io/copyFrom"

// FilledNote is o's note that an operator fills it before applying it
// (reason.OperatorFilled), if it has one.
func FilledNote(o render.Object) (render.Note, bool) {
	for _, n := range o.Notes {
		if n.Reason == reason.OperatorFilled {
			return n, true
		}
	}
	return render.Note{}, false
}

// withNote is o with its note of reason r saying msg instead.
func withNote(o render.Object, r reason.Reason, msg string) render.Object {
	notes := append([]render.Note(nil), o.Notes...)
	for i := range notes {
		if notes[i].Reason == r {
			notes[i].Message = msg
		}
	}
	o.Notes = notes
	return o
}

// fillFromCluster fills obj as flux-operator's ResourceSet reconciler does
// (copyResources): a ConfigMap's data and binaryData, or a Secret's type (when it
// sets none) and data as stringData, from the object its copyFrom annotation names,
// read from the cluster (read-only). The error says why it could not be read.
func fillFromCluster(ctx context.Context, c *kube.Clients, obj *unstructured.Unstructured, opts Options) error {
	from := obj.GetAnnotations()[CopyFromAnnotation]
	parts := strings.Split(from, "/")
	if len(parts) != 2 {
		return fmt.Errorf("its %s annotation %q is not namespace/name", CopyFromAnnotation, from)
	}
	if obj.GetKind() == "Secret" && !opts.CopySecrets {
		return fmt.Errorf("Secret %s is not read on a pull request, which names it (the runner's --lookup-secrets lets drift read it)", from)
	}
	id := object.ID{Version: "v1", Kind: obj.GetKind(), Namespace: parts[0], Name: parts[1]}
	res, err := c.ResourceFor(id)
	if err != nil {
		return err
	}
	src, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
		defer cancel()
		return res.Get(ctx, parts[1], metav1.GetOptions{})
	})
	if err != nil {
		return fmt.Errorf("%s %s cannot be read: %s", obj.GetKind(), from, kube.Describe(c, "get", id, err).Message)
	}
	switch obj.GetKind() {
	case "ConfigMap":
		data, _, _ := unstructured.NestedStringMap(src.Object, "data")
		_ = unstructured.SetNestedStringMap(obj.Object, data, "data")
		if bin, _, _ := unstructured.NestedStringMap(src.Object, "binaryData"); len(bin) > 0 {
			_ = unstructured.SetNestedStringMap(obj.Object, bin, "binaryData")
		}
	case "Secret":
		if _, ok, _ := unstructured.NestedString(obj.Object, "type"); !ok {
			t, _, _ := unstructured.NestedString(src.Object, "type")
			if t == "" {
				t = "Opaque"
			}
			_ = unstructured.SetNestedField(obj.Object, t, "type")
		}
		data, _, _ := unstructured.NestedStringMap(src.Object, "data")
		plain := make(map[string]string, len(data))
		for k, v := range data {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return fmt.Errorf("Secret %s holds a value that is not base64", from)
			}
			plain[k] = string(b)
		}
		_ = unstructured.SetNestedStringMap(obj.Object, plain, "stringData")
	}
	return nil
}
