package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
	helmkube "helm.sh/helm/v3/pkg/kube"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// FieldManager is the field manager the helm CLI writes as (cmd/helm sets
// kube.ManagedFieldsManager to "helm").
const FieldManager = "helm"

// Helm's ownership metadata (pkg/action/validate.go).
const (
	helmManagedByLabel       = "app.kubernetes.io/managed-by"
	helmManagedBy            = "Helm"
	helmReleaseNameAnno      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnno = "meta.helm.sh/release-namespace"
)

// SetMetadata adds what `helm install` and `helm upgrade` add to every object of
// the release before sending it (setMetadataVisitor): the managed-by label and the
// release name and namespace annotations, over any values the chart wrote.
func SetMetadata(u *unstructured.Unstructured, releaseName, releaseNamespace string) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[helmManagedByLabel] = helmManagedBy
	u.SetLabels(labels)
	annos := u.GetAnnotations()
	if annos == nil {
		annos = map[string]string{}
	}
	annos[helmReleaseNameAnno] = releaseName
	annos[helmReleaseNamespaceAnno] = releaseNamespace
	u.SetAnnotations(annos)
}

// ErrNotInRelease is what CheckOwnership returns, wrapped, for a live object that
// another owner (or none) has: `helm upgrade` stops on it.
var ErrNotInRelease = errors.New("exists and cannot be imported into the current release")

// CheckOwnership returns the error `helm upgrade` and `helm install` stop with
// when the chart adds an object that is live but not the release's (without
// --take-ownership): it must carry Helm's label and the release's annotations.
func CheckOwnership(live *unstructured.Unstructured, releaseName, releaseNamespace string) error {
	var problems []string
	want := func(kind string, m map[string]string, k, v string) {
		switch got, ok := m[k]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s %s is missing (Helm needs %q)", kind, k, v))
		case got != v:
			problems = append(problems, fmt.Sprintf("%s %s is %q, not %q", kind, k, got, v))
		}
	}
	want("label", live.GetLabels(), helmManagedByLabel, helmManagedBy)
	want("annotation", live.GetAnnotations(), helmReleaseNameAnno, releaseName)
	want("annotation", live.GetAnnotations(), helmReleaseNamespaceAnno, releaseNamespace)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s; the real upgrade fails: add the label and annotations to the live object, or run helm with --take-ownership",
		ErrNotInRelease, strings.Join(problems, "; "))
}

// Patch returns the patch `helm upgrade` sends to turn live into desired (pkg/kube
// Client.Update without --force, its createPatch): for kinds Helm's scheme knows, a
// strategic three-way merge patch between original, desired and live that overwrites
// changed fields; for the rest (custom resources, v1beta1 CRDs) a JSON merge patch
// from original to desired alone, blind to live. original is the object as the
// previous release's manifest has it; nil when that release did not have it, and
// Helm then takes desired itself as the original (an object it adopts,
// existingResourceConflict). desired carries Helm's metadata (SetMetadata). An
// empty patch ("{}") means Helm sends nothing for the object.
func Patch(original, live, desired *unstructured.Unstructured) ([]byte, types.PatchType, error) {
	if original == nil {
		original = desired
	}
	oldData, err := json.Marshal(original)
	if err != nil {
		return nil, "", fmt.Errorf("failed to encode the release's copy: %w", err)
	}
	newData, err := json.Marshal(desired)
	if err != nil {
		return nil, "", fmt.Errorf("failed to encode the rendered object: %w", err)
	}
	currentData, err := json.Marshal(live)
	if err != nil {
		return nil, "", fmt.Errorf("failed to encode the live object: %w", err)
	}
	// Helm's own conversion, with its scheme of built-in kinds only, decides the patch
	// type as the real upgrade does.
	versioned := helmkube.AsVersioned(&resource.Info{Object: desired.DeepCopy(), Mapping: &meta.RESTMapping{GroupVersionKind: desired.GroupVersionKind()}})
	_, isUnstructured := versioned.(runtime.Unstructured)
	_, isCRD := versioned.(*apiextv1beta1.CustomResourceDefinition)
	if isUnstructured || isCRD {
		patch, err := jsonpatch.CreateMergePatch(oldData, newData)
		if err != nil {
			return nil, "", fmt.Errorf("failed to compute Helm's merge patch: %w", err)
		}
		return patch, types.MergePatchType, nil
	}
	patchMeta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
	if err != nil {
		return nil, "", fmt.Errorf("failed to read the patch strategy of %s: %w", desired.GroupVersionKind().Kind, err)
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(oldData, newData, currentData, patchMeta, true)
	if err != nil {
		return nil, "", fmt.Errorf("failed to compute Helm's three-way patch: %w", err)
	}
	return patch, types.StrategicMergePatchType, nil
}

// send sends through s, with dryRun=All, what `helm upgrade` sends for one object and
// returns the server's answer: a create when live is nil, else the patch of Patch;
// when that patch is empty Helm sends nothing and the object stays live as it is.
// desired carries Helm's metadata. Helm sends no fieldValidation.
func send(ctx context.Context, s applier.Server, original, live, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if live == nil {
		obj := desired.DeepCopy()
		// Helm's resource helper creates with modify=true: resourceVersion cleared.
		obj.SetResourceVersion("")
		return s.Create(ctx, obj, "")
	}
	patch, pt, err := Patch(original, live, desired)
	if err != nil {
		return nil, err
	}
	if len(patch) == 0 || string(patch) == "{}" {
		return live.DeepCopy(), nil
	}
	return s.Patch(ctx, pt, patch, "")
}

// ObjectPlan is what `helm upgrade` (or `helm install`, when the release has no
// deployed revision) does to one rendered object of the chart.
type ObjectPlan struct {
	// Original is the previous release's copy (nil when the release did not have it).
	Original *unstructured.Unstructured
	// Desired is the rendered object with Helm's metadata, as Helm sends it.
	Desired *unstructured.Unstructured
	// Untouched says why Helm sends nothing for the object ("" when it does).
	Untouched string
}

// PlanObject decides what Helm does with obj, the rendered object with its namespace
// defaulted and notes the reasons of what rendering noted about it, given its live
// copy (nil when absent) and the deployed release (nil for an install). CRDs
// of the chart's crds/ directory are created on install when absent and never touched
// otherwise; a hook is Helm's only while it runs, so it is not planned here (preview
// it as an object applied now, without Helm's metadata). An object the release does
// not have but the cluster does must be the release's (CheckOwnership).
func PlanObject(rel *Release, obj *unstructured.Unstructured, notes []reason.Reason, live *unstructured.Unstructured, releaseName, releaseNamespace string) (ObjectPlan, error) {
	desired := obj.DeepCopy()
	if slices.Contains(notes, reason.HelmCRD) {
		switch {
		case live != nil:
			return ObjectPlan{Desired: desired, Untouched: "Helm never updates a CRD of the chart's crds/ directory"}, nil
		case rel != nil:
			return ObjectPlan{Desired: desired, Untouched: "Helm creates CRDs of the chart's crds/ directory only on install, not on upgrade"}, nil
		}
		return ObjectPlan{Desired: desired}, nil
	}
	SetMetadata(desired, releaseName, releaseNamespace)
	original := rel.Previous(object.IDOf(desired))
	if original == nil && live != nil {
		if err := CheckOwnership(live, releaseName, releaseNamespace); err != nil {
			return ObjectPlan{}, err
		}
	}
	return ObjectPlan{Original: original, Desired: desired}, nil
}
