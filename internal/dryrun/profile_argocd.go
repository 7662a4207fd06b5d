package dryrun

import (
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Argo CD's application controller syncs every object with kubectl's apply code
// in-process (gitops-engine pkg/utils/kube/resource_ops.go, newApplyOptions) as
// field manager argocd-controller (common.ArgoCDSSAManager), client-side by default
// and server-side, always forced, with the sync option ServerSideApply=true. Before
// that the repo-server adds the resource tracking (util/argo/resource_tracking.go,
// SetAppInstance). Read from Argo CD 3.6.0-dev (argo-cd commit 37ee0097).

// ArgoCDFieldManager is the field manager Argo CD's controller writes as, client-side
// and server-side alike.
const ArgoCDFieldManager = "argocd-controller"

// Argo CD's tracking keys (common/common.go).
const (
	ArgoCDTrackingAnnotation = "argocd.argoproj.io/tracking-id"
	argoCDInstallationID     = "argocd.argoproj.io/installation-id"
	argoCDLegacyLabel        = "applications.argoproj.io/app-name"
	argoCDDefaultLabel       = "app.kubernetes.io/instance"
	argoCDSyncOptions        = "argocd.argoproj.io/sync-options"
)

// Tracking methods (argocd-cm application.resourceTrackingMethod). Argo CD 3 defaults
// to annotation; Argo CD 2 defaulted to label.
const (
	TrackingAnnotation         = "annotation"
	TrackingLabel              = "label"
	TrackingAnnotationAndLabel = "annotation+label"
)

var argoCDProfile = &Profile{
	Name:   "argocd",
	Method: ClientSide,
	// gitops-engine hands its manager to ApplyOptions.FieldManager for client-side
	// applies too, so kubectl's kubectl-client-side-apply never appears.
	Manager:         ArgoCDFieldManager,
	FixedManager:    true,
	FieldValidation: argoCDFieldValidation,
	Prepare:         argoCDTrack,
	After:           argoCDReconciledFirst,
	Recreates:       argoCDRecreates,
	Managers:        []string{ArgoCDFieldManager, argoCDReconcileManager},
	Doc:             "Argo CD sync (kubectl's client-side apply as argocd-controller, with Argo CD's resource tracking)",
}

var argoCDServerSideProfile = &Profile{
	Name:            "argocd-server-side",
	Method:          ServerSide,
	Manager:         ArgoCDFieldManager,
	FixedManager:    true,
	Force:           true, // newApplyOptions: o.ForceConflicts = serverSideApply
	FieldValidation: argoCDFieldValidation,
	// sync_context.go applyObject: performCSAUpgradeMigration of
	// kubectl-client-side-apply's fields to argocd-controller before the apply
	// (sync option ClientSideApplyMigration, on by default), then kubectl's own
	// migrateToSSAIfNecessary of the last-applied annotation's update owners.
	MigratesCSA:     true,
	MigrationNeeded: argoCDMigrates,
	Prepare:         argoCDTrack,
	After:           argoCDDropLastApplied,
	Managers:        []string{ArgoCDFieldManager},
	Doc:             "Argo CD sync with ServerSideApply=true (forced server-side apply as argocd-controller, with Argo CD's resource tracking)",
}

// argoCDObjectProfile honours the sync option an object may carry
// (shouldUseServerSideApply): argocd.argoproj.io/sync-options ServerSideApply=false
// applies it client-side, ServerSideApply=true server-side.
func argoCDObjectProfile(obj *unstructured.Unstructured) *Profile {
	opts := map[string]bool{}
	for _, o := range strings.Split(obj.GetAnnotations()[argoCDSyncOptions], ",") {
		opts[strings.TrimSpace(o)] = true
	}
	switch {
	case opts["ServerSideApply=false"]:
		return argoCDProfile
	case opts["ServerSideApply=true"]:
		return argoCDServerSideProfile
	}
	return nil
}

// argoCDFieldValidation: newApplyOptions sets a Validator but never
// ApplyOptions.ValidationDirective, so kubectl sends no fieldValidation and the
// server's default, Warn, applies: unknown fields are dropped with a warning.
const argoCDFieldValidation = "Warn"

func init() {
	// Set here: each profile's choice names the other.
	argoCDProfile.ObjectProfile = argoCDObjectProfile
	argoCDServerSideProfile.ObjectProfile = argoCDObjectProfile
	register(argoCDProfile)
	register(argoCDServerSideProfile)
}

// argoCDTrack adds Argo CD's resource tracking as SetAppInstance does. The
// repo-server skips CRDs (reposerver/repository/repository.go), and drift refuses a
// cluster-scoped object that names a namespace, the one case where the controller's
// NormalizeTargetObjects would track a CRD.
func argoCDTrack(obj, _ *unstructured.Unstructured, o Owner) (string, error) {
	gvk := obj.GroupVersionKind()
	if gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition" {
		return "", nil
	}
	app := ArgoCDInstanceName(o)
	key := o.InstanceLabel
	if key == "" {
		key = argoCDDefaultLabel
	}
	switch o.Tracking {
	case TrackingLabel:
		// Label tracking keeps the whole name, so matching by label works; the server
		// refuses one longer than 63 characters.
		argoCDLabel(obj, key, app)
		return "", nil
	case TrackingAnnotationAndLabel:
		argoCDAnnotate(obj, app, o)
		v, err := truncateLabel(app)
		if err != nil {
			return "", fmt.Errorf("failed to set app instance label: %w", err)
		}
		argoCDLabel(obj, key, v)
		return "", nil
	default:
		argoCDAnnotate(obj, app, o)
		return "", nil
	}
}

// ArgoCDInstanceName is the name Argo CD tracks an Application's objects by
// (Application.InstanceName): <namespace>_<name> for an Application outside Argo
// CD's own namespace, else its name.
func ArgoCDInstanceName(o Owner) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "_" + o.Name
}

// ArgoCDTrackingID is the tracking-id annotation's value,
// <app>:<group>/<kind>:<namespace>/<name>; a cluster-scoped object carries the
// Application's destination namespace (UnstructuredToAppInstanceValue).
func ArgoCDTrackingID(obj *unstructured.Unstructured, o Owner) string {
	ns := obj.GetNamespace()
	if ns == "" {
		ns = o.Destination
	}
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", ArgoCDInstanceName(o), gvk.Group, gvk.Kind, ns, obj.GetName())
}

// argoCDAnnotate sets the tracking id; without an installation ID (drift knows none)
// Argo CD removes any installation-id annotation the manifest carries.
func argoCDAnnotate(obj *unstructured.Unstructured, app string, o Owner) {
	id := ArgoCDTrackingID(obj, o)
	a := obj.GetAnnotations()
	delete(a, argoCDInstallationID)
	if a == nil {
		a = map[string]string{}
	}
	a[ArgoCDTrackingAnnotation] = id
	obj.SetAnnotations(a)
}

// argoCDLabel sets the instance label (util/kube SetAppInstanceLabel). Only the
// legacy key applications.argoproj.io/app-name is copied into the pod templates of
// apps workloads (Argo CD stopped labelling templates in v0.11).
func argoCDLabel(obj *unstructured.Unstructured, key, val string) {
	addLabels(obj, map[string]string{key: val})
	if key != argoCDLegacyLabel {
		return
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != "apps" && gvk.Group != "extensions" {
		return
	}
	switch gvk.Kind {
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet":
		labels, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "metadata", "labels")
		if labels == nil {
			labels = map[string]any{}
		}
		labels[key] = val
		_ = unstructured.SetNestedMap(obj.Object, labels, "spec", "template", "metadata", "labels")
	}
}

// labelOkEnd is what a truncated label value must end with (argo.OkEndPattern).
var labelOkEnd = regexp.MustCompile("[a-zA-Z0-9]$")

// truncateLabel is Argo CD's TruncateLabel: at most 63 characters, then trailing
// characters cut until it ends alphanumeric. A value within the limit is kept as is.
func truncateLabel(val string) (string, error) {
	const max = 63
	if len(val) <= max {
		return val, nil
	}
	val = val[:max]
	for !labelOkEnd.MatchString(val) {
		if len(val) <= 1 {
			return "", fmt.Errorf("unable to truncate label to not end with a special character")
		}
		val = val[:len(val)-1]
	}
	return val, nil
}

// argoCDDropLastApplied removes the last-applied annotation that Argo CD's migration
// leaves unowned: the migrated managers' fields, the annotation with them, become
// argocd-controller's, whose apply does not carry it, so the server drops it (kubectl
// keeps it only as manager kubectl, through kubectl-last-applied).
func argoCDDropLastApplied(merged, live *unstructured.Unstructured, _ Owner) {
	if !argoCDMigrates(live) {
		return
	}
	if _, ok := merged.GetAnnotations()[LastAppliedAnnotation]; !ok {
		return
	}
	if ownsLastApplied(merged) {
		return
	}
	a := merged.GetAnnotations()
	delete(a, LastAppliedAnnotation)
	if len(a) == 0 {
		a = nil
	}
	merged.SetAnnotations(a)
}

// argoCDMigrates reports whether a sync with ServerSideApply=true migrates live's
// client-side managers: gitops-engine's needsClientSideApplyMigration (an update by
// kubectl-client-side-apply), or kubectl's migrateToSSAIfNecessary (an update owns
// the last-applied annotation, such as argocd-controller's own from client-side
// syncs).
func argoCDMigrates(live *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	for _, e := range live.GetManagedFields() {
		if e.Manager == ClientSideFieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate {
			return true
		}
	}
	return len(csaupgrade.FindFieldsOwners(live.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, fieldpath.NewSet(lastAppliedPath))) > 0
}

// ownsLastApplied reports whether a field manager of obj owns the last-applied
// annotation.
func ownsLastApplied(obj *unstructured.Unstructured) bool {
	set := fieldpath.NewSet(lastAppliedPath)
	for _, op := range []metav1.ManagedFieldsOperationType{metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate} {
		if len(csaupgrade.FindFieldsOwners(obj.GetManagedFields(), op, set)) > 0 {
			return true
		}
	}
	return false
}
