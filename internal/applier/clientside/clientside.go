// Package clientside sends objects as kubectl apply does client-side, with kubectl's
// own code, for the appliers that apply so (kubectl, and Argo CD, which runs
// kubectl's apply in-process): a create of the annotated object when it is not live,
// else the three-way patch between the last-applied configuration, the new object
// and the live object (strategic merge for built-in kinds, JSON merge for the rest),
// which also updates the annotation.
package clientside

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	kubectlutil "k8s.io/kubectl/pkg/util"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/fields"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// Send sends o as kubectl apply would, client-side, through s, as applier name with
// fieldValidation validation. recreates (nil: never) says why the applier deletes the
// live object and creates o anew instead of patching it: the prediction is then a
// dry-run creation under a generated name, shown under its own.
func Send(ctx context.Context, s applier.Server, o applier.Object, name applier.Name, validation string, recreates func(obj, live *unstructured.Unstructured) string) (applier.Sent, error) {
	var sent applier.Sent
	modified, err := ModifiedConfiguration(o.Obj)
	if err != nil {
		return sent, &applier.Refused{Reason: reason.Invalid, Message: err.Error()}
	}
	recreate := ""
	if o.Live != nil && recreates != nil {
		recreate = recreates(o.Obj, o.Live)
	}
	if o.Live != nil && recreate == "" {
		patchType, patch, err := threeWayPatch(o.ID, o.Live, modified)
		if err != nil {
			return sent, &applier.Refused{Reason: reason.Invalid, Message: err.Error()}
		}
		sent.Merged, err = s.Patch(ctx, patchType, patch, validation)
		return sent, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(modified); err != nil {
		return sent, &applier.Refused{Reason: reason.Invalid, Message: err.Error()}
	}
	if recreate != "" {
		// The name is taken until the real delete: dry-run a creation under a
		// generated one.
		obj.SetName("")
		obj.SetGenerateName(o.ID.Name + "-")
	}
	merged, err := s.Create(ctx, obj, validation)
	if err == nil && recreate != "" {
		merged.SetName(o.ID.Name)
		merged.SetGenerateName("")
		withoutGenerateName(merged)
		// The engine tells a live object changed meanwhile by its resourceVersion.
		merged.SetResourceVersion(o.Live.GetResourceVersion())
		sent.Warnings = append(sent.Warnings, applier.Warning{Reason: reason.Immutable, Message: fmt.Sprintf(
			"%s deletes and creates this object anew: %s; its uid and creationTimestamp will change", name, recreate)})
	}
	sent.Merged = merged
	return sent, err
}

// ModifiedConfiguration is the object as kubectl apply sends it, computed by kubectl's
// own code (k8s.io/kubectl/pkg/util, as pkg/cmd/apply calls it): kubectl writes
// "annotations":{} into the last-applied configuration of an object without
// annotations, and a re-implementation that did not reported untouched objects as
// modified.
func ModifiedConfiguration(obj *unstructured.Unstructured) ([]byte, error) {
	modified, err := kubectlutil.GetModifiedConfiguration(obj.DeepCopy(), true, unstructured.UnstructuredJSONScheme)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the object as kubectl apply does: %w", err)
	}
	return modified, nil
}

// threeWayPatch computes kubectl apply's patch, pinned to the live resourceVersion as
// kubectl pins it: a change since the read fails the patch (409), and the object is
// read again.
func threeWayPatch(id object.ID, live *unstructured.Unstructured, modified []byte) (types.PatchType, []byte, error) {
	original := []byte(live.GetAnnotations()[applier.LastAppliedAnnotation])
	current, err := live.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	var patchType types.PatchType
	var patch []byte
	typed, err := scheme.Scheme.New(id.GVK())
	switch {
	case runtime.IsNotRegisteredError(err):
		patchType = types.MergePatchType
		patch, err = jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)
	case err != nil:
		return "", nil, err
	default:
		patchType = types.StrategicMergePatchType
		var meta strategicpatch.PatchMetaFromStruct
		if meta, err = strategicpatch.NewPatchMetaFromStruct(typed); err == nil {
			patch, err = strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("failed to compute the client-side apply patch for %s: %w", id.Display(), err)
	}
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return "", nil, err
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = live.GetResourceVersion()
	m["metadata"] = md
	patch, err = json.Marshal(m)
	return patchType, patch, err
}

// generateNamePath is metadata.generateName as a field path.
var generateNamePath = fieldpath.MakePathOrDie("metadata", "generateName")

// withoutGenerateName removes metadata.generateName from obj's managed fields: an
// object created by name owns none.
func withoutGenerateName(obj *unstructured.Unstructured) {
	if mfs, err := fields.Without(obj.GetManagedFields(), fieldpath.NewSet(generateNamePath)); err == nil {
		obj.SetManagedFields(mfs)
	}
}

// Leaves is o as a client-side applier's first apply leaves it: created with the
// last-applied configuration kubectl computes.
func Leaves(o applier.Object) (applier.Left, error) {
	modified, err := ModifiedConfiguration(o.Obj)
	if err != nil {
		return applier.Left{}, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(modified); err != nil {
		return applier.Left{}, err
	}
	return applier.Left{Obj: obj, Created: true}, nil
}
