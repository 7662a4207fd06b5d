package report

import (
	"path"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
)

// Rules are a target's noise rules from drift.yaml: fields left out of comparison and
// output, and values shown masked.
type Rules struct {
	Ignore []config.IgnoreRule
	Mask   []config.MaskRule
}

// managers are the field managers whose fields the ignore rules leave out of an
// object's comparison (patterns, as path.Match takes them).
func (r Rules) managers(id object.ID) []string {
	var managers []string
	for _, rule := range r.Ignore {
		if rule.Matches(id.Group, id.Kind, id.Namespace, id.Name) {
			managers = append(managers, rule.Managers...)
		}
	}
	return managers
}

// Masks reports whether a mask rule masks fields of the object.
func (r Rules) Masks(id object.ID) bool {
	return slices.ContainsFunc(r.Mask, func(rule config.MaskRule) bool {
		return rule.Matches(id.Group, id.Kind, id.Namespace, id.Name) && len(rule.Paths) > 0
	})
}

// Trim drops from a previewed object's result what the report does not read, once its
// preview is done: the prediction's managedFields, and the live object's but for the
// managers the target's ignore rules name for it (kubectl diff strips managedFields
// too). At 10,000 objects it takes a quarter off the run's peak memory.
func (r Rules) Trim(res *dryrun.Result) {
	if res.Merged != nil {
		res.Merged.SetManagedFields(nil)
	}
	if res.Live == nil {
		return
	}
	managers := r.managers(res.ID)
	var keep []metav1.ManagedFieldsEntry
	if len(managers) > 0 {
		for _, mf := range res.Live.GetManagedFields() {
			if ManagerMatches(managers, mf.Manager) {
				keep = append(keep, mf)
			}
		}
	}
	res.Live.SetManagedFields(keep)
}

// ManagerMatches reports whether a field manager's name matches one of an ignore
// rule's manager patterns (path.Match's).
func ManagerMatches(patterns []string, manager string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, _ := path.Match(p, manager)
		return ok
	})
}
