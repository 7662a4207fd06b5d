// Package helm is helm upgrade (or install, for a release with no deployed revision)
// as an applier: Helm's three-way patch between the previous release's copy, the live
// object and the new one, with Helm's labels and annotations, as the helm CLI's field
// manager; the deployed revision read from its release Secret as Helm's storage
// reads it; what the upgrade deletes.
package helm

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/serverside"
	"github.com/drift-gitops/drift/internal/reason"
)

type helm struct {
	applier.Base
	// release is the deployed revision the upgrade starts from (nil: an install).
	release *Release
}

// New returns the helm applier, installing the release (Upgrading a deployed one).
func New() applier.Applier { return Upgrading(nil) }

// Upgrading returns the helm applier upgrading rel, its deployed revision (nil: an
// install).
func Upgrading(rel *Release) applier.Applier { return helm{release: rel} }

func (helm) Name() applier.Name { return applier.Helm }

func (helm) Doc() string {
	return "helm upgrade (the three-way patch from the release's previous manifest, with Helm's labels and annotations)"
}

func (helm) Sending() applier.Sending {
	return applier.Sending{
		Method:       applier.HelmUpgrade,
		Manager:      FieldManager,
		ManagerFixed: true,
		Managers:     []string{FieldManager},
	}
}

// Traits: Helm upgrades a release.
func (helm) Traits() applier.Traits { return applier.Traits{UpgradesRelease: true} }

// Owner is the release the target's chart renders.
func (helm) Owner(d applier.Declared) applier.Owner { return d.Release }

// Send sends, with dryRun=All, what `helm upgrade` sends for one object of the
// release o.Owner names. A hook is created by Helm outside the release, so it is
// previewed as created anew: a dry-run create when absent, else a forced apply of the
// hook as written.
func (h helm) Send(ctx context.Context, s applier.Server, o applier.Object) (applier.Sent, error) {
	if slices.Contains(o.Notes, reason.HelmHook) {
		return serverside.Send(ctx, s, o, h.Name(), nil)
	}
	plan, err := PlanObject(h.release, o.Obj, o.Notes, o.Live, o.Owner.Name, o.Owner.Namespace)
	if err != nil {
		why := reason.Invalid
		if errors.Is(err, ErrNotInRelease) {
			why = reason.Conflict
		}
		return applier.Sent{}, &applier.Refused{Reason: why, Message: o.ID.Display() + ": " + err.Error()}
	}
	if plan.Untouched != "" {
		return applier.Sent{Untouched: plan.Untouched}, nil
	}
	merged, err := send(ctx, s, plan.Original, o.Live, plan.Desired)
	return applier.Sent{Merged: merged}, err
}

// Leaves the object with Helm's metadata, as the release's install or upgrade
// leaves it (a hook without it: Helm owns a hook only while it runs).
func (helm) Leaves(o applier.Object) (applier.Left, error) {
	if !slices.Contains(o.Notes, reason.HelmHook) {
		SetMetadata(o.Obj, o.Owner.Name, o.Owner.Namespace)
	}
	return applier.Left{Obj: o.Obj}, nil
}

// Keeps reports whether Helm leaves live in place when the chart drops it
// (annotation helm.sh/resource-policy: keep).
func Keeps(live *unstructured.Unstructured) bool {
	return live != nil && live.GetAnnotations()["helm.sh/resource-policy"] == "keep"
}
