package dryrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// csaManagers are the managers client-side apply leaves in managedFields.
var csaManagers = map[string]bool{ClientSideFieldManager: true, "before-first-apply": true}

// appliedClientSide reports whether a live object was last applied client-side by
// another manager than the one previewing: the upgrade path of the server-side apply
// design. kubectl apply --server-side, Flux and Argo CD then move the client-side
// managers' fields to their own manager (client-go's csaupgrade) before applying.
func appliedClientSide(live *unstructured.Unstructured, manager string) bool {
	if live == nil || csaManagers[manager] {
		return false
	}
	for _, mf := range live.GetManagedFields() {
		if csaManagers[mf.Manager] && mf.Operation == metav1.ManagedFieldsOperationUpdate {
			return true
		}
	}
	return false
}

// onlyCSAConflicts reports a field manager conflict with client-side apply managers
// only: after the migration those fields are the applier's own, so it is no conflict.
func onlyCSAConflicts(err error) bool {
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
		if !csaManagers[mgr] {
			return false
		}
		found = true
	}
	return found
}

// migrateCSA predicts the migration's effect on the server's answer: fields the last
// client-side apply set that the repository no longer has are deleted, since the
// applier now owns them and does not apply them (unless another manager owns them
// too). It returns the fields it removed from merged.
func migrateCSA(live, merged, rendered *unstructured.Unstructured) []string {
	var last map[string]any
	raw := live.GetAnnotations()[LastAppliedAnnotation]
	if raw == "" || json.Unmarshal([]byte(raw), &last) != nil {
		return nil
	}
	others := &fieldpath.Set{}
	for _, mf := range live.GetManagedFields() {
		if csaManagers[mf.Manager] || mf.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if s.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)) == nil {
			others = others.Union(s)
		}
	}
	var removed []string
	var walk func(old, cur map[string]any, path []string)
	walk = func(old, cur map[string]any, path []string) {
		for k, v := range old {
			p := append(append([]string{}, path...), k)
			if len(p) == 1 && (k == "apiVersion" || k == "kind" || k == "metadata" || k == "status") {
				if k == "metadata" {
					om, _ := v.(map[string]any)
					cm, _ := cur[k].(map[string]any)
					for _, sub := range []string{"labels", "annotations"} {
						o2, _ := om[sub].(map[string]any)
						c2, _ := cm[sub].(map[string]any)
						walk(o2, c2, []string{"metadata", sub})
					}
				}
				continue
			}
			cv, present := cur[k]
			if !present {
				if others.Has(fieldpath.MakePathOrDie(toAny(p)...)) {
					continue
				}
				unstructured.RemoveNestedField(merged.Object, p...)
				removed = append(removed, "."+strings.Join(p, "."))
				continue
			}
			if om, ok := v.(map[string]any); ok {
				if cm, ok := cv.(map[string]any); ok {
					walk(om, cm, p)
				}
			}
		}
	}
	walk(last, rendered.Object, nil)
	sort.Strings(removed)
	return removed
}

func toAny(p []string) []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}

func migrationWarning(manager string, removed []string) Message {
	msg := fmt.Sprintf("this object was applied client-side before (kubectl-client-side-apply owns fields): kubectl apply --server-side, Flux and Argo CD move that ownership to %s on their first server-side apply, so no conflict arises", manager)
	if len(removed) > 0 {
		msg += "; fields the last client-side apply set and the repository no longer has are deleted: " + strings.Join(removed, ", ")
	}
	return Message{Reason: ReasonCSAMigration, Message: msg}
}
