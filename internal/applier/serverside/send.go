// Package serverside sends objects as a server-side apply does, for every applier
// that applies server-side (kubectl --server-side, Flux, Argo CD with
// ServerSideApply=true, Helm's hooks): a conflict with other field managers is
// reported and the apply forced, as --force-conflicts would, and an object applied
// client-side before is taken over as the applier's migration says (Migrate).
package serverside

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/reason"
)

// Send sends o as a server-side apply through s, as applier name with migration m
// (nil: none): forced from the start when o says so, else forced after a field
// manager conflict, which is reported unless only client-side apply's managers
// conflict and the migration takes their fields.
func Send(ctx context.Context, s applier.Server, o applier.Object, name applier.Name, m applier.Migration) (applier.Sent, error) {
	var sent applier.Sent
	body, err := Body(o)
	if err != nil {
		return sent, &applier.Refused{Reason: reason.Invalid, Message: err.Error()}
	}
	force := o.Force
	csa := applier.AppliedClientSide(o.Live, o.Manager)
	if m != nil {
		csa = m.Needed(o.Live, o.Manager)
	}
	merged, err := s.Apply(ctx, body, force)
	if err != nil && !force && IsFieldManagerConflict(err) {
		if !csa || !OnlyCSAConflicts(err) {
			sent.Warnings = append(sent.Warnings, ConflictWarning(err))
		}
		force = true
		merged, err = s.Apply(ctx, body, force)
	}
	if err == nil && csa && m != nil {
		var removed []string
		if merged, removed, err = Migrate(ctx, s, merged, o.Manager, m); err == nil {
			sent.Warnings = append(sent.Warnings, MigrationWarning(name, o.Manager, m, removed))
		}
	}
	if err != nil && IsFieldManagerConflict(err) {
		return sent, &applier.Final{Err: err}
	}
	sent.Merged = merged
	return sent, err
}

// Body is the object as the applier sends it. It never pins the live
// resourceVersion: the API server copies the applied body into an existing
// last-applied-configuration annotation, so a pinned version would appear in the
// prediction though no real apply writes it. A change between the read and the dry
// run shows in the answer's resourceVersion instead.
func Body(o applier.Object) ([]byte, error) {
	obj := o.Obj.Object
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if _, pinned := meta["resourceVersion"]; pinned {
			// Left out of copies of the two maps above it; the object is the caller's.
			meta = maps.Clone(meta)
			delete(meta, "resourceVersion")
			obj = maps.Clone(obj)
			obj["metadata"] = meta
		}
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", o.ID.Display(), err)
	}
	return data, nil
}

// IsFieldManagerConflict reports a conflict with other field managers.
func IsFieldManagerConflict(err error) bool {
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsConflict(err) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}

// ConflictWarning lists the fields other managers own, grouped by manager.
func ConflictWarning(err error) applier.Warning {
	byManager := map[string][]string{}
	status := err.(apierrors.APIStatus).Status()
	for _, c := range status.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		mgr := strings.TrimPrefix(c.Message, "conflict with ")
		byManager[mgr] = append(byManager[mgr], c.Field)
	}
	managers := make([]string, 0, len(byManager))
	for m := range byManager {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	parts := make([]string, 0, len(managers))
	for _, m := range managers {
		fields := byManager[m]
		sort.Strings(fields)
		parts = append(parts, fmt.Sprintf("%s owned by %s", strings.Join(fields, ", "), m))
	}
	return applier.Warning{Reason: reason.Conflict, Message: "apply conflicts with other field managers: " + strings.Join(parts, "; ") +
		". A plain server-side apply will fail; the diff shows a forced apply (--force-conflicts), which takes these fields over"}
}
