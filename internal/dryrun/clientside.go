package dryrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	kubectlutil "k8s.io/kubectl/pkg/util"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
)

// LastAppliedAnnotation is where client-side apply keeps what it applied last.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// ClientSideFieldManager is the manager kubectl's client-side apply writes as.
const ClientSideFieldManager = "kubectl-client-side-apply"

// previewClientSide sends what kubectl apply (client-side) would send, with
// dryRun=All: a create of the annotated object when it is not live, else the
// three-way patch between the last-applied configuration, the new object and the live
// object (strategic merge for built-in kinds, JSON merge for the rest), which also
// updates the annotation. Each try is pinned to the live resourceVersion.
func previewClientSide(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *Result, opts Options) {
	for attempt := 1; ; attempt++ {
		live, err := read(ctx, c, res, r, attempt, opts)
		if err != nil {
			r.Err = requestError(c, "get", r, err)
			return
		}
		obj, skip, err := prepared(r, live, opts)
		if err == nil && skip != "" {
			untouched(r, live, obj, skip, opts)
			return
		}
		var modified []byte
		if err == nil {
			modified, err = modifiedConfiguration(obj)
		}
		if err != nil {
			r.Err = &Message{Reason: reason.Invalid, Message: err.Error()}
			return
		}
		var merged *unstructured.Unstructured
		recreate := ""
		if live != nil && opts.Profile.Recreates != nil {
			recreate = opts.Profile.Recreates(obj, live)
		}
		if live == nil || recreate != "" {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(modified); err != nil {
				r.Err = &Message{Reason: reason.Invalid, Message: err.Error()}
				return
			}
			if recreate != "" {
				// The name is taken until the real delete: dry-run a creation under a
				// generated one.
				obj.SetName("")
				obj.SetGenerateName(r.ID.Name + "-")
			}
			merged, err = kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
				ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
				defer cancel()
				return res.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: opts.FieldManager, FieldValidation: opts.Profile.fieldValidation()})
			})
			if err == nil && recreate != "" {
				merged.SetName(r.ID.Name)
				merged.SetGenerateName("")
				withoutGenerateName(merged)
				// settle tells a live object changed meanwhile by its resourceVersion.
				merged.SetResourceVersion(live.GetResourceVersion())
				r.Warnings = append(r.Warnings, Message{Reason: reason.Immutable, Message: fmt.Sprintf(
					"%s deletes and creates this object anew: %s; its uid and creationTimestamp will change", opts.Profile.Name, recreate)})
			}
		} else {
			patchType, patch, perr := threeWayPatch(r, live, modified)
			if perr != nil {
				r.Err = &Message{Reason: reason.Invalid, Message: perr.Error()}
				return
			}
			merged, err = kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
				ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
				defer cancel()
				return res.Patch(ctx, r.ID.Name, patchType, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: opts.FieldManager, FieldValidation: opts.Profile.fieldValidation()})
			})
		}
		if !settle(c, r, live, merged, err, attempt, opts) {
			return
		}
	}
}

// modifiedConfiguration is the object as kubectl apply sends it, computed by kubectl's
// own code (k8s.io/kubectl/pkg/util, as pkg/cmd/apply calls it): kubectl writes
// "annotations":{} into the last-applied configuration of an object without
// annotations, and a re-implementation that did not reported untouched objects as
// modified.
func modifiedConfiguration(obj *unstructured.Unstructured) ([]byte, error) {
	modified, err := kubectlutil.GetModifiedConfiguration(obj.DeepCopy(), true, unstructured.UnstructuredJSONScheme)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the object as kubectl apply does: %w", err)
	}
	return modified, nil
}

// threeWayPatch computes kubectl apply's patch, pinned to the live resourceVersion.
func threeWayPatch(r *Result, live *unstructured.Unstructured, modified []byte) (types.PatchType, []byte, error) {
	original := []byte(live.GetAnnotations()[LastAppliedAnnotation])
	current, err := live.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	var patchType types.PatchType
	var patch []byte
	typed, err := scheme.Scheme.New(r.ID.GVK())
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
		return "", nil, fmt.Errorf("failed to compute the client-side apply patch for %s: %w", r.ID.Display(), err)
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
	mfs := obj.GetManagedFields()
	for i, e := range mfs {
		set := &fieldpath.Set{}
		if e.FieldsV1 == nil || set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)) != nil {
			continue
		}
		if raw, err := set.Difference(fieldpath.NewSet(generateNamePath)).ToJSON(); err == nil {
			mfs[i].FieldsV1 = &metav1.FieldsV1{Raw: raw}
		}
	}
	obj.SetManagedFields(mfs)
}
