// Package argocd is Argo CD's sync as an applier, client-side (argocd, its default)
// and with the sync option ServerSideApply=true (argocd-server-side), with Argo CD's
// resource tracking and the RBAC reconcile it runs before a client-side apply.
package argocd

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/clientside"
	"github.com/drift-gitops/drift/internal/applier/serverside"
)

// Argo CD's application controller syncs every object with kubectl's apply code
// in-process (gitops-engine pkg/utils/kube/resource_ops.go, newApplyOptions) as
// field manager argocd-controller (common.ArgoCDSSAManager), client-side by default
// and server-side, always forced, with the sync option ServerSideApply=true. Before
// that the repo-server adds the resource tracking (util/argo/resource_tracking.go,
// SetAppInstance). Read from Argo CD 3.6.0-dev (argo-cd commit 37ee0097).

// FieldManager is the field manager Argo CD's controller writes as, client-side and
// server-side alike.
const FieldManager = "argocd-controller"

// Argo CD's tracking keys (common/common.go).
const (
	TrackingIDAnnotation = "argocd.argoproj.io/tracking-id"
	installationID       = "argocd.argoproj.io/installation-id"
	legacyLabel          = "applications.argoproj.io/app-name"
	defaultLabel         = "app.kubernetes.io/instance"
	syncOptions          = "argocd.argoproj.io/sync-options"
)

// Tracking methods (argocd-cm application.resourceTrackingMethod). Argo CD 3 defaults
// to annotation; Argo CD 2 defaulted to label.
const (
	TrackingAnnotation         = "annotation"
	TrackingLabel              = "label"
	TrackingAnnotationAndLabel = "annotation+label"
)

// clientSide is Argo CD's default sync: kubectl's client-side apply in-process.
type clientSide struct{ applier.Base }

// serverSide is a sync with ServerSideApply=true.
type serverSide struct{ applier.Base }

// New returns the argocd applier: Argo CD's sync, client-side.
func New() applier.Applier { return clientSide{} }

// NewServerSide returns the argocd-server-side applier: a sync with
// ServerSideApply=true.
func NewServerSide() applier.Applier { return serverSide{} }

func (clientSide) Name() applier.Name { return applier.ArgoCD }
func (serverSide) Name() applier.Name { return applier.ArgoCDServerSide }

func (clientSide) Doc() string {
	return "Argo CD sync (kubectl's client-side apply as argocd-controller, with Argo CD's resource tracking)"
}

func (serverSide) Doc() string {
	return "Argo CD sync with ServerSideApply=true (forced server-side apply as argocd-controller, with Argo CD's resource tracking)"
}

func (clientSide) Sending() applier.Sending {
	return applier.Sending{
		Method: applier.ClientSide,
		// gitops-engine hands its manager to ApplyOptions.FieldManager for client-side
		// applies too, so kubectl's kubectl-client-side-apply never appears.
		Manager:         FieldManager,
		ManagerFixed:    true,
		FieldValidation: fieldValidation,
		Managers:        []string{FieldManager, reconcileManager},
	}
}

func (serverSide) Sending() applier.Sending {
	return applier.Sending{
		Method:          applier.ServerSide,
		Manager:         FieldManager,
		ManagerFixed:    true,
		Force:           true, // newApplyOptions: o.ForceConflicts = serverSideApply
		FieldValidation: fieldValidation,
		Managers:        []string{FieldManager},
		// sync_context.go applyObject: performCSAUpgradeMigration of
		// kubectl-client-side-apply's fields to argocd-controller before the apply
		// (sync option ClientSideApplyMigration, on by default), then kubectl's own
		// migrateToSSAIfNecessary of the last-applied annotation's update owners.
		Migration: migration{},
	}
}

// Traits: Argo CD's record is the Application's status.resources.
func (clientSide) Traits() applier.Traits { return applier.Traits{Record: applier.ArgoCDResources} }
func (serverSide) Traits() applier.Traits { return applier.Traits{Record: applier.ArgoCDResources} }

func (clientSide) Owner(d applier.Declared) applier.Owner { return owner(d) }
func (serverSide) Owner(d applier.Declared) applier.Owner { return owner(d) }

// owner is the Application drift.yaml's argocd: names: by default the target's name,
// in Argo CD's own namespace, tracked by annotation.
func owner(d applier.Declared) applier.Owner {
	a := d.Application
	return applier.Owner{Name: cmp.Or(a.Name, d.Target), Namespace: a.Namespace,
		Tracking: cmp.Or(a.Tracking, TrackingAnnotation), InstanceLabel: cmp.Or(a.InstanceLabel, defaultLabel)}
}

func (clientSide) For(obj *unstructured.Unstructured) applier.Applier { return objectApplier(obj) }
func (serverSide) For(obj *unstructured.Unstructured) applier.Applier { return objectApplier(obj) }

func (clientSide) Prepare(obj, live *unstructured.Unstructured, o applier.Owner) (string, error) {
	return track(obj, live, o)
}

func (serverSide) Prepare(obj, live *unstructured.Unstructured, o applier.Owner) (string, error) {
	return track(obj, live, o)
}

func (a clientSide) Send(ctx context.Context, s applier.Server, o applier.Object) (applier.Sent, error) {
	return clientside.Send(ctx, s, o, a.Name(), a.Sending().Validation(), recreates)
}

func (a serverSide) Send(ctx context.Context, s applier.Server, o applier.Object) (applier.Sent, error) {
	return serverside.Send(ctx, s, o, a.Name(), a.Sending().Migration)
}

// After: the fields the RBAC reconcile wrote are its own.
func (clientSide) After(merged, live *unstructured.Unstructured, _ applier.Owner) {
	reconciledFirst(merged, live)
}

// After: the last-applied annotation the migration leaves unowned goes.
func (serverSide) After(merged, live *unstructured.Unstructured, _ applier.Owner) {
	dropLastApplied(merged, live)
}

// Leaves the object created with its last-applied configuration, as the first
// client-side sync creates it.
func (clientSide) Leaves(o applier.Object) (applier.Left, error) { return clientside.Leaves(o) }

// migration is performCSAUpgradeMigration's, then kubectl's: kubectl's choice of
// entries, and no manager keeps the last-applied annotation.
type migration struct{ applier.CSAMigration }

// Needed: gitops-engine's needsClientSideApplyMigration, or kubectl's
// migrateToSSAIfNecessary (migrates).
func (migration) Needed(live *unstructured.Unstructured, _ string) bool { return migrates(live) }

// objectApplier honours the sync option an object may carry
// (shouldUseServerSideApply): argocd.argoproj.io/sync-options ServerSideApply=false
// applies it client-side, ServerSideApply=true server-side; nil without one.
func objectApplier(obj *unstructured.Unstructured) applier.Applier {
	opts := map[string]bool{}
	for _, o := range strings.Split(obj.GetAnnotations()[syncOptions], ",") {
		opts[strings.TrimSpace(o)] = true
	}
	switch {
	case opts["ServerSideApply=false"]:
		return New()
	case opts["ServerSideApply=true"]:
		return NewServerSide()
	}
	return nil
}

// fieldValidation: newApplyOptions sets a Validator but never
// ApplyOptions.ValidationDirective, so kubectl sends no fieldValidation and the
// server's default, Warn, applies: unknown fields are dropped with a warning.
const fieldValidation = "Warn"

// track adds Argo CD's resource tracking as SetAppInstance does. The
// repo-server skips CRDs (reposerver/repository/repository.go), and drift refuses a
// cluster-scoped object that names a namespace, the one case where the controller's
// NormalizeTargetObjects would track a CRD.
func track(obj, _ *unstructured.Unstructured, o applier.Owner) (string, error) {
	gvk := obj.GroupVersionKind()
	if gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition" {
		return "", nil
	}
	app := InstanceName(o)
	key := cmp.Or(o.InstanceLabel, defaultLabel)
	switch o.Tracking {
	case TrackingLabel:
		// Label tracking keeps the whole name, so matching by label works; the server
		// refuses one longer than 63 characters.
		label(obj, key, app)
		return "", nil
	case TrackingAnnotationAndLabel:
		annotate(obj, app, o)
		v, err := truncateLabel(app)
		if err != nil {
			return "", fmt.Errorf("failed to set app instance label: %w", err)
		}
		label(obj, key, v)
		return "", nil
	default:
		annotate(obj, app, o)
		return "", nil
	}
}

// InstanceName is the name Argo CD tracks an Application's objects by
// (Application.InstanceName): <namespace>_<name> for an Application outside Argo
// CD's own namespace, else its name.
func InstanceName(o applier.Owner) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "_" + o.Name
}

// TrackingID is the tracking-id annotation's value,
// <app>:<group>/<kind>:<namespace>/<name>; a cluster-scoped object carries the
// Application's destination namespace (UnstructuredToAppInstanceValue).
func TrackingID(obj *unstructured.Unstructured, o applier.Owner) string {
	ns := cmp.Or(obj.GetNamespace(), o.Destination)
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", InstanceName(o), gvk.Group, gvk.Kind, ns, obj.GetName())
}

// annotate sets the tracking id; without an installation ID (drift knows none)
// Argo CD removes any installation-id annotation the manifest carries.
func annotate(obj *unstructured.Unstructured, app string, o applier.Owner) {
	id := TrackingID(obj, o)
	a := obj.GetAnnotations()
	delete(a, installationID)
	if a == nil {
		a = map[string]string{}
	}
	a[TrackingIDAnnotation] = id
	obj.SetAnnotations(a)
}

// label sets the instance label (util/kube SetAppInstanceLabel). Only the
// legacy key applications.argoproj.io/app-name is copied into the pod templates of
// apps workloads (Argo CD stopped labelling templates in v0.11).
func label(obj *unstructured.Unstructured, key, val string) {
	applier.AddLabels(obj, map[string]string{key: val})
	if key != legacyLabel {
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

// dropLastApplied removes the last-applied annotation that Argo CD's migration
// leaves unowned: the migrated managers' fields, the annotation with them, become
// argocd-controller's, whose apply does not carry it, so the server drops it (kubectl
// keeps it only as manager kubectl, through kubectl-last-applied).
func dropLastApplied(merged, live *unstructured.Unstructured) {
	if !migrates(live) {
		return
	}
	if _, ok := merged.GetAnnotations()[applier.LastAppliedAnnotation]; !ok {
		return
	}
	if ownsLastApplied(merged) {
		return
	}
	a := merged.GetAnnotations()
	delete(a, applier.LastAppliedAnnotation)
	if len(a) == 0 {
		a = nil
	}
	merged.SetAnnotations(a)
}

// migrates reports whether a sync with ServerSideApply=true migrates live's
// client-side managers: gitops-engine's needsClientSideApplyMigration (an update by
// kubectl-client-side-apply), or kubectl's migrateToSSAIfNecessary (an update owns
// the last-applied annotation, such as argocd-controller's own from client-side
// syncs).
func migrates(live *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	for _, e := range live.GetManagedFields() {
		if e.Manager == applier.ClientSideFieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate {
			return true
		}
	}
	return len(csaupgrade.FindFieldsOwners(live.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, fieldpath.NewSet(applier.LastAppliedPath))) > 0
}

// ownsLastApplied reports whether a field manager of obj owns the last-applied
// annotation.
func ownsLastApplied(obj *unstructured.Unstructured) bool {
	set := fieldpath.NewSet(applier.LastAppliedPath)
	for _, op := range []metav1.ManagedFieldsOperationType{metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate} {
		if len(csaupgrade.FindFieldsOwners(obj.GetManagedFields(), op, set)) > 0 {
			return true
		}
	}
	return false
}
