package serverside

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/fields"
	"github.com/drift-gitops/drift/internal/reason"
)

// OnlyCSAConflicts reports a field manager conflict with client-side apply managers
// only: after the migration those fields are the applier's own, so it is no conflict.
func OnlyCSAConflicts(err error) bool {
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	found := false
	for _, c := range status.Status().Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		mgr := strings.Trim(strings.TrimPrefix(c.Message, "conflict with "), `"`)
		if i := strings.IndexByte(mgr, '"'); i >= 0 {
			mgr = mgr[:i]
		}
		if !slices.Contains(applier.ClientSideManagers, mgr) {
			return false
		}
		found = true
	}
	return found
}

// Migrate predicts what the applier's migration (m) does to an object applied
// client-side before, as kubectl apply --server-side does it (pkg/cmd/apply:
// saveLastApplyAnnotationIfNecessary, then migrateToSSAIfNecessary with client-go's
// csaupgrade, then the apply again), from merged, the server's answer to the first
// apply: the client-side managers' fields (those m moves) become manager's, so those
// the repository no longer has, and no other manager owns, are removed by the second
// apply; the server then defaults what it defaults, which a dry-run update of the
// result asks it to do (through s). It returns the prediction and the fields removed.
func Migrate(ctx context.Context, s applier.Server, merged *unstructured.Unstructured, manager string, m applier.Migration) (*unstructured.Unstructured, []string, error) {
	out := merged.DeepCopy()
	mfs := out.GetManagedFields()
	if lastApplied := m.KeepsLastApplied(manager); lastApplied != "" && out.GetAnnotations()[applier.LastAppliedAnnotation] != "" && len(csaupgrade.FindFieldsOwners(mfs, metav1.ManagedFieldsOperationApply, fieldpath.NewSet(applier.LastAppliedPath))) == 0 {
		// kubectl applies the annotation alone as kubectl-last-applied first.
		entry, err := fields.Entry(metav1.ManagedFieldsEntry{Manager: lastApplied, Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: out.GetAPIVersion(), FieldsType: "FieldsV1"}, fieldpath.NewSet(applier.LastAppliedPath))
		if err != nil {
			return nil, nil, err
		}
		mfs = append(mfs, entry)
	}
	owners := sets.New[string]()
	for _, e := range csaupgrade.FindFieldsOwners(mfs, metav1.ManagedFieldsOperationUpdate, fieldpath.NewSet(applier.LastAppliedPath)) {
		owners.Insert(e.Manager)
	}
	owners.Insert(applier.ClientSideManagers...)
	migrated := func(e metav1.ManagedFieldsEntry) bool {
		return m.Moves(merged, e, owners.Has(e.Manager) && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "")
	}
	csa, applied, others := &fieldpath.Set{}, &fieldpath.Set{}, &fieldpath.Set{}
	var kept []metav1.ManagedFieldsEntry
	for _, e := range mfs {
		s, err := fields.Of(e)
		if err != nil {
			return nil, nil, fmt.Errorf("failed to read the managed fields of %s: %w", e.Manager, err)
		}
		switch {
		case migrated(e):
			csa = csa.Union(s)
			continue
		case e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply:
			applied = s
		default:
			others = others.Union(s)
		}
		kept = append(kept, e)
	}
	remove := csa.Difference(applied).Difference(others)
	removed := removeFields(out.Object, remove, applied.Union(others))
	out.SetManagedFields(kept)
	if len(removed) == 0 {
		return out, nil, nil
	}
	// The second apply leaves the removed fields unset; the server defaults them
	// again as it does every write: ask it, with a dry-run update of the result.
	send := out.DeepCopy()
	send.SetManagedFields(nil)
	defaulted, err := s.Update(ctx, send)
	if err != nil {
		return nil, nil, err
	}
	defaulted.SetManagedFields(kept)
	// What the server defaults again is not removed.
	var gone []string
	for _, p := range removed {
		if !deletePath(defaulted.DeepCopy().Object, p, false) {
			gone = append(gone, p.String())
		}
	}
	return defaulted, gone, nil
}

// removeFields deletes from obj every path of remove that holds nothing owned
// (keep), whole, shortest first, as server-side apply's pruning removes what the
// applier stops applying: a list item, a map or a field. A map that keeps owned
// fields stays. It returns the paths removed.
func removeFields(obj map[string]any, remove, keep *fieldpath.Set) []fieldpath.Path {
	var paths []fieldpath.Path
	remove.Iterate(func(p fieldpath.Path) { paths = append(paths, p.Copy()) })
	sort.SliceStable(paths, func(i, j int) bool { return len(paths[i]) < len(paths[j]) })
	var removed []fieldpath.Path
	for _, p := range paths {
		if len(p) == 0 || p.String() == applier.LastAppliedPath.String() || keep.Has(p) || hasBelow(keep, p) {
			continue
		}
		if deletePath(obj, p, false) {
			removed = append(removed, p)
		}
	}
	return removed
}

// deletePath removes the value at p; onlyEmpty removes it only when it is an empty
// map (a list item or struct whose fields are gone).
func deletePath(obj map[string]any, p fieldpath.Path, onlyEmpty bool) bool {
	var parent any = obj
	for i, pe := range p {
		last := i == len(p)-1
		switch c := parent.(type) {
		case map[string]any:
			if pe.FieldName == nil {
				return false
			}
			v, ok := c[*pe.FieldName]
			if !ok {
				return false
			}
			if last {
				if onlyEmpty && !isEmptyMap(v) {
					return false
				}
				delete(c, *pe.FieldName)
				return true
			}
			parent = v
		case []any:
			idx := -1
			for j, item := range c {
				if matches(pe, j, item) {
					idx = j
					break
				}
			}
			if idx < 0 {
				return false
			}
			if last {
				if onlyEmpty && !isEmptyMap(c[idx]) {
					return false
				}
				// The list is reached through its parent; rewrite it there.
				return removeItem(obj, p[:i], idx)
			}
			parent = c[idx]
		default:
			return false
		}
	}
	return false
}

func removeItem(obj map[string]any, listPath fieldpath.Path, idx int) bool {
	var parent any = obj
	var set func([]any)
	for _, pe := range listPath {
		switch c := parent.(type) {
		case map[string]any:
			name := *pe.FieldName
			set = func(l []any) { c[name] = l }
			parent = c[name]
		case []any:
			for j, item := range c {
				if matches(pe, j, item) {
					jj := j
					set = func(l []any) { c[jj] = l }
					parent = item
					break
				}
			}
		}
	}
	list, ok := parent.([]any)
	if !ok || set == nil {
		return false
	}
	set(append(append([]any{}, list[:idx]...), list[idx+1:]...))
	return true
}

func matches(pe fieldpath.PathElement, j int, item any) bool {
	switch {
	case pe.Index != nil:
		return *pe.Index == j
	case pe.Value != nil:
		return value.Equals(*pe.Value, value.NewValueInterface(item))
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			v, ok := m[f.Name]
			if !ok || !value.Equals(f.Value, value.NewValueInterface(v)) {
				return false
			}
		}
		return true
	}
	return false
}

// hasBelow reports whether s holds a path strictly below p.
func hasBelow(s *fieldpath.Set, p fieldpath.Path) bool {
	found := false
	s.Iterate(func(q fieldpath.Path) {
		if !found && len(q) > len(p) && q[:len(p)].Equals(p) {
			found = true
		}
	})
	return found
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// MigrationWarning says that applier name, applying as manager, takes over an object
// applied before it as m says, and which fields that removes.
func MigrationWarning(name applier.Name, manager string, m applier.Migration, removed []string) applier.Warning {
	msg := fmt.Sprintf("this object was applied %s, before %s: %s moves those fields to %s on its first apply, so they raise no conflict",
		m.Before(), name, name, manager)
	if len(removed) > 0 {
		msg += "; fields the last client-side apply set and the repository no longer has are deleted: " + strings.Join(removed, ", ")
	}
	return applier.Warning{Reason: reason.CSAMigration, Message: msg}
}
