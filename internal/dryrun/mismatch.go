package dryrun

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/fields"
	"github.com/drift-gitops/drift/internal/reason"
)

// appliedBy is a field manager and the operation it writes with: argocd-controller is
// Argo CD's manager client-side (Update) and server-side (Apply), kubectl the manager
// of kubectl's server-side apply (an Update as kubectl comes from kubectl scale or
// patch).
type appliedBy struct {
	manager   string
	operation metav1.ManagedFieldsOperationType
}

// appliersBy maps each known applier's field managers and the operation it writes
// with to the appliers that write so.
func appliersBy(known *applier.Registry) map[appliedBy][]string {
	out := map[appliedBy][]string{}
	if known == nil {
		return out
	}
	for _, a := range known.All() {
		s := a.Sending()
		for _, m := range s.Managers {
			k := appliedBy{m, s.Method.Operation()}
			out[k] = append(out[k], string(a.Name()))
		}
	}
	return out
}

// mismatch returns an applier-mismatch warning when the live object's fields are
// managed by a known applier (opts.Appliers) other than opts.Applier: the prediction
// is then for an applier that does not apply this object, and likely wrong. Managers
// no applier knows (controllers, people) are not counted, and none is counted when
// the applier's own manager holds fields too (an object moving between appliers).
func mismatch(live *unstructured.Unstructured, opts Options) *Message {
	if live == nil {
		return nil
	}
	sending := opts.Applier.Sending()
	mine := map[string]bool{opts.FieldManager: true}
	for _, m := range sending.Managers {
		mine[m] = true
	}
	known := appliersBy(opts.Appliers)
	found := map[string]bool{}
	var appliers []string
	for _, e := range fields.Headers(live) {
		if e.Subresource != "" {
			continue
		}
		if mine[e.Manager] && (e.Manager != opts.FieldManager || e.Operation == sending.Method.Operation()) {
			return nil
		}
		if names := known[appliedBy{e.Manager, e.Operation}]; len(names) > 0 {
			found[e.Manager] = true
			appliers = append(appliers, names...)
		}
	}
	if len(found) == 0 {
		return nil
	}
	var managers []string
	for m := range found {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	sort.Strings(appliers)
	appliers = slices.Compact(appliers)
	return &Message{Reason: reason.ApplierMismatch, Message: fmt.Sprintf(
		"the live object's fields are managed by %s, the field manager of %s, not by %s (%s): the prediction is for %s; if %s applies this target, set applier: %s in drift.yaml (or --applier)",
		strings.Join(managers, ", "), orList(appliers), opts.FieldManager, opts.Applier.Name(), opts.Applier.Name(), orList(appliers), appliers[0])}
}

func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
