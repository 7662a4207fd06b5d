package prune

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// MarkAsApplied leaves in a cluster what an applier leaves after applying objs, which
// are already there: the ownership marks on members and the inventory's list. drift's
// ephemeral server uses it after loading the base, so that the head's prune candidates
// are found as they would be on a cluster the base was deployed to.
func MarkAsApplied(ctx context.Context, c *kube.Clients, objs []render.Object, defaultNS string) error {
	invs, _ := inventories(objs)
	for _, inv := range invs {
		invID := inv.obj.ID()
		if invID.Namespace == "" {
			invID.Namespace = defaultNS
		}
		var members []object.ID
		for _, o := range objs {
			id := o.ID()
			if id.Key() == inv.obj.ID().Key() || o.Obj.GetName() == "" {
				continue
			}
			m, err := c.Mapper.RESTMapping(id.GroupKind(), id.Version)
			if err != nil {
				continue
			}
			if m.Scope.Name() == meta.RESTScopeNameNamespace && id.Namespace == "" {
				id.Namespace = defaultNS
			}
			members = append(members, id)
		}
		var mark map[string]any
		switch inv.format {
		case FormatApplyConfig:
			uid, err := uidOf(ctx, c, invID)
			if err != nil {
				return err
			}
			mark = map[string]any{"annotations": map[string]any{ApplyOwnerAnnotation: uid}}
			// Only what the inventory lists is marked, as the applier would.
			listed := map[object.Key]bool{}
			for _, line := range strings.Split(inv.obj.Obj.GetAnnotations()[LastAppliedObjects], "\n") {
				if parts := strings.Split(strings.TrimSpace(line), ":"); len(parts) == 4 {
					listed[object.ID{Namespace: parts[0], Group: parts[1], Kind: parts[2], Name: parts[3]}.Key()] = true
				}
			}
			kept := members[:0]
			for _, m := range members {
				if listed[m.Key()] {
					kept = append(kept, m)
				}
			}
			members = kept
		case FormatCLIUtils:
			id := inv.obj.Obj.GetLabels()[cliUtilsInventoryID]
			data := map[string]any{}
			for _, m := range members {
				data[fmt.Sprintf("%s_%s_%s_%s", m.Namespace, m.Name, m.Group, m.Kind)] = ""
			}
			if err := patch(ctx, c, invID, map[string]any{"data": data}); err != nil {
				return err
			}
			mark = map[string]any{"annotations": map[string]any{cliUtilsOwningInvAnno: id}}
		case FormatApplySet:
			id := inv.obj.Obj.GetLabels()[applySetIDLabel]
			seen := map[string]bool{}
			var gks []string
			for _, m := range members {
				gk := m.Kind
				if m.Group != "" {
					gk += "." + m.Group
				}
				if !seen[gk] {
					seen[gk] = true
					gks = append(gks, gk)
				}
			}
			sort.Strings(gks)
			if err := patch(ctx, c, invID, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				applySetGroupKinds: strings.Join(gks, ","), "applyset.kubernetes.io/tooling": "drift/ephemeral"}}}); err != nil {
				return err
			}
			mark = map[string]any{"labels": map[string]any{applySetPartOfLabel: id}}
		}
		for _, m := range members {
			if err := patch(ctx, c, m, map[string]any{"metadata": mark}); err != nil {
				return err
			}
		}
	}
	return nil
}

// uidOf returns the live object's UID.
func uidOf(ctx context.Context, c *kube.Clients, id object.ID) (string, error) {
	p := &pruner{ctx: ctx, c: c}
	res, _, err := p.resource(id.GroupKind(), id.Namespace)
	if err != nil {
		return "", err
	}
	obj, err := res.Get(ctx, id.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading inventory %s: %w", id.Display(), err)
	}
	return string(obj.GetUID()), nil
}

func patch(ctx context.Context, c *kube.Clients, id object.ID, body map[string]any) error {
	p := &pruner{ctx: ctx, c: c}
	res, _, err := p.resource(id.GroupKind(), id.Namespace)
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
