package ephemeral

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// markAsApplied leaves in a cluster what an applier leaves after applying objs, which
// are already there: the ownership marks on members and the inventory's list
// (inventory.Inventory.Record). Load does it after loading the base, so that the
// head's prune candidates are found as they would be on a cluster the base was
// deployed to. The objects left names (nil: none) are not in the server: the
// inventory lists them, but they are not marked.
func markAsApplied(ctx context.Context, c *kube.Clients, objs []render.Object, defaultNS string, left func(render.Object) bool) error {
	invs, _ := inventory.Find(objs)
	for _, inv := range invs {
		invID := inv.Obj.ID()
		if invID.Namespace == "" {
			invID.Namespace = defaultNS
		}
		var members []object.ID
		unmarked := map[object.Key]bool{}
		for _, o := range objs {
			id := o.ID()
			if id.Key() == inv.Obj.ID().Key() || o.Name() == "" {
				continue
			}
			m, err := c.Mapper.RESTMapping(id.GroupKind(), id.Version)
			if err != nil {
				continue
			}
			if m.Scope.Name() == meta.RESTScopeNameNamespace && id.Namespace == "" {
				id.Namespace = defaultNS
			}
			if left != nil && left(o) {
				unmarked[id.Key()] = true
			}
			members = append(members, id)
		}
		uid := ""
		if inv.Format == inventory.ApplyConfig {
			var err error
			if uid, err = uidOf(ctx, c, invID); err != nil {
				return err
			}
			// Only what the inventory lists is marked, as the applier would.
			listed := map[object.Key]bool{}
			for _, id := range inventory.Listed(inv.Obj.Get().GetAnnotations()[inventory.LastAppliedObjects]) {
				listed[id.Key()] = true
			}
			kept := members[:0]
			for _, m := range members {
				if listed[m.Key()] {
					kept = append(kept, m)
				}
			}
			members = kept
		}
		patch, mark := inv.Record(members, uid)
		if patch != nil {
			if err := mergePatch(ctx, c, invID, patch); err != nil {
				return err
			}
		}
		for _, m := range members {
			if unmarked[m.Key()] {
				continue
			}
			if err := mergePatch(ctx, c, m, map[string]any{"metadata": mark}); err != nil {
				return err
			}
		}
	}
	return nil
}

// uidOf returns the live object's UID.
func uidOf(ctx context.Context, c *kube.Clients, id object.ID) (string, error) {
	res, err := resourceOf(c, id)
	if err != nil {
		return "", err
	}
	obj, err := res.Get(ctx, id.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading inventory %s: %w", id.Display(), err)
	}
	return string(obj.GetUID()), nil
}

// mergePatch writes body into the live object id names, as the applier that marks it.
func mergePatch(ctx context.Context, c *kube.Clients, id object.ID, body map[string]any) error {
	res, err := resourceOf(c, id)
	if err != nil {
		return err
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if _, err := res.Patch(ctx, id.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: "drift-ephemeral-applier"}); err != nil {
		return fmt.Errorf("marking %s as applied: %w", id.Display(), err)
	}
	return nil
}

// resourceOf maps a group and kind (whatever the version) to its client, in the
// object's namespace where the kind is namespaced.
func resourceOf(c *kube.Clients, id object.ID) (dynamic.ResourceInterface, error) {
	m, err := c.Mapper.RESTMapping(id.GroupKind())
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(m.Resource).Namespace(id.Namespace), nil
	}
	return c.Dynamic.Resource(m.Resource), nil
}
