package dryrun

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/reason"
)

// applierOf maps each known applier's field manager and the operation it writes
// with to the profiles that write so: argocd-controller is Argo CD's manager
// client-side (Update) and server-side (Apply), kubectl the manager of kubectl's
// server-side apply (an Update as kubectl comes from kubectl scale or patch).
func applierOf() map[appliedBy][]string {
	out := map[appliedBy][]string{}
	for _, name := range ProfileNames() {
		p := profiles[name]
		for _, m := range p.Managers {
			k := appliedBy{m, p.operation()}
			out[k] = append(out[k], name)
		}
	}
	return out
}

type appliedBy struct {
	manager   string
	operation metav1.ManagedFieldsOperationType
}

// operation is the managedFields operation the profile's applies are recorded with.
func (p *Profile) operation() metav1.ManagedFieldsOperationType {
	if p.Method == ServerSide {
		return metav1.ManagedFieldsOperationApply
	}
	return metav1.ManagedFieldsOperationUpdate
}

// mismatch returns an applier-mismatch warning when the live object's fields are
// managed by a known applier other than the profile's: the prediction is then for
// an applier that does not apply this object, and likely wrong. Managers no profile
// knows (controllers, people) are not counted, and none is counted when the
// profile's own manager holds fields too (an object moving between appliers).
func mismatch(live *unstructured.Unstructured, opts Options) *Message {
	if live == nil {
		return nil
	}
	mine := map[string]bool{opts.FieldManager: true}
	for _, m := range opts.Profile.Managers {
		mine[m] = true
	}
	known := applierOf()
	found := map[string]bool{}
	var appliers []string
	for _, e := range live.GetManagedFields() {
		if e.Subresource != "" {
			continue
		}
		if mine[e.Manager] && (e.Manager != opts.FieldManager || e.Operation == opts.Profile.operation()) {
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
	appliers = compactStrings(appliers)
	return &Message{Reason: reason.ApplierMismatch, Message: fmt.Sprintf(
		"the live object's fields are managed by %s, the field manager of %s, not by %s (%s): the prediction is for %s; if %s applies this target, set applier: %s in drift.yaml (or --applier)",
		strings.Join(managers, ", "), orList(appliers), opts.FieldManager, opts.Profile.Name, opts.Profile.Name, orList(appliers), appliers[0])}
}

func compactStrings(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
