package prune

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
)

// applyConfig prunes with an apply-config object: its live annotation lists the
// objects of the last apply, one namespace:group:kind:name per line; an object is
// owned when its apply-owner annotation holds the live apply-config object's UID.
func (p *pruner) applyConfig() {
	rendered := p.inv.Obj.Get()
	if hash, ok := rendered.GetLabels()[inventory.ApplyHashLabel]; ok {
		if want := inventory.ApplyHash(rendered.GetAnnotations()[inventory.LastAppliedObjects]); hash != want {
			p.fail("label %s is %q but the %s annotation hashes to %q: the inventory was edited by hand; regenerate it with the tool that writes it (drift's hash: lowercase hex SHA-256 of the annotation, first 63 characters)", inventory.ApplyHashLabel, hash, inventory.LastAppliedObjects, want)
			return
		}
	}
	live, ok := p.liveInventory()
	if !ok {
		return
	}
	uid := string(live.GetUID())
	owned := func(obj *unstructured.Unstructured) (bool, string) {
		owner, ok := obj.GetAnnotations()[inventory.ApplyOwnerAnnotation]
		switch {
		case !ok:
			return false, fmt.Sprintf("it has no %s annotation: another tool or a person created or took it over", inventory.ApplyOwnerAnnotation)
		case owner != uid:
			return false, fmt.Sprintf("its %s annotation names %q, not this inventory (%s): it belongs to another apply", inventory.ApplyOwnerAnnotation, owner, uid)
		}
		return true, ""
	}
	for i, line := range strings.Split(live.GetAnnotations()[inventory.LastAppliedObjects], "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.Split(line, ":")
		if len(parts) != 4 || parts[2] == "" || parts[3] == "" {
			p.note("line %d of the live %s annotation, %q, is not namespace:group:kind:name: skipped", i+1, inventory.LastAppliedObjects, line)
			continue
		}
		id := object.ID{Namespace: parts[0], Group: parts[1], Kind: parts[2], Name: parts[3]}
		if _, m, err := p.resource(id.GroupKind(), id.Namespace); err == nil {
			if m.Scope.Name() == meta.RESTScopeNameNamespace && id.Namespace == "" {
				p.note("line %d of the live %s annotation, %q, names a namespaced kind without a namespace: skipped", i+1, inventory.LastAppliedObjects, line)
				continue
			}
		} else if meta.IsNoMatchError(err) {
			p.note("line %d of the live %s annotation names kind %s, which the cluster does not serve: skipped", i+1, inventory.LastAppliedObjects, id.GroupKind())
			continue
		}
		p.candidate(id, owned)
	}
}

// cliUtils prunes with a cli-utils (kpt) inventory ConfigMap: its live data keys are
// namespace_name_group_kind; an object is owned when its owning-inventory annotation
// holds the inventory id.
func (p *pruner) cliUtils() {
	invID := p.inv.Obj.Get().GetLabels()[inventory.CLIUtilsInventoryID]
	live, ok := p.liveInventory()
	if !ok {
		return
	}
	if liveID := live.GetLabels()[inventory.CLIUtilsInventoryID]; liveID != invID {
		p.fail("the live inventory's id is %q, the rendered one's %q: they are different inventories; fix the %s label", liveID, invID, inventory.CLIUtilsInventoryID)
		return
	}
	owned := func(obj *unstructured.Unstructured) (bool, string) {
		owner, ok := obj.GetAnnotations()[inventory.CLIUtilsOwner]
		switch {
		case !ok:
			return false, fmt.Sprintf("it has no %s annotation: another tool or a person created or took it over", inventory.CLIUtilsOwner)
		case owner != invID:
			return false, fmt.Sprintf("its %s annotation names inventory %q, not %q", inventory.CLIUtilsOwner, owner, invID)
		}
		return true, ""
	}
	data, _, _ := unstructured.NestedStringMap(live.Object, "data")
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts := strings.Split(k, "_")
		if len(parts) < 4 {
			p.note("data key %q is not namespace_name_group_kind: skipped", k)
			continue
		}
		n := len(parts)
		id := object.ID{Namespace: parts[0], Name: strings.Join(parts[1:n-2], "_"), Group: parts[n-2], Kind: parts[n-1]}
		p.candidate(id, owned)
	}
}

// applySet prunes with an ApplySet parent: members are the live objects labelled
// part-of=<id>, of the group-kinds and in the namespaces the live parent names.
func (p *pruner) applySet() {
	id := p.inv.Obj.ID()
	ns := id.Namespace
	setID := p.inv.Obj.Get().GetLabels()[inventory.ApplySetIDLabel]
	if want := inventory.ApplySetID(id.Name, ns, id.Kind, id.Group); setID != want {
		p.fail("label %s is %q, but KEP-3659 gives this parent the id %q: the label does not belong to this object", inventory.ApplySetIDLabel, setID, want)
		return
	}
	live, ok := p.liveInventory()
	if !ok {
		return
	}
	if liveID := live.GetLabels()[inventory.ApplySetIDLabel]; liveID != setID {
		p.fail("the live parent's %s label is %q, not %q", inventory.ApplySetIDLabel, liveID, setID)
		return
	}
	namespaces := []string{}
	if ns != "" {
		namespaces = append(namespaces, ns)
	}
	for _, n := range strings.Split(live.GetAnnotations()[inventory.ApplySetNamespaces], ",") {
		if n = strings.TrimSpace(n); n != "" {
			namespaces = append(namespaces, n)
		}
	}
	owned := func(obj *unstructured.Unstructured) (bool, string) {
		if got := obj.GetLabels()[inventory.ApplySetPartOfLabel]; got != setID {
			return false, fmt.Sprintf("its %s label is %q, not %q", inventory.ApplySetPartOfLabel, got, setID)
		}
		return true, ""
	}
	for _, gkText := range strings.Split(live.GetAnnotations()[inventory.ApplySetGroupKinds], ",") {
		gkText = strings.TrimSpace(gkText)
		if gkText == "" {
			continue
		}
		gk := schema.ParseGroupKind(gkText)
		_, m, err := p.resource(gk, "")
		if err != nil {
			p.note("the live parent lists %s, which the cluster does not serve: skipped", gkText)
			continue
		}
		scopes := namespaces
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			scopes = []string{""}
		}
		for _, n := range scopes {
			res, _, _ := p.resource(gk, n)
			list, err := kube.Retry(p.ctx, p.c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
				return res.List(ctx, metav1.ListOptions{LabelSelector: inventory.ApplySetPartOfLabel + "=" + setID})
			})
			if err != nil {
				p.fail("members of kind %s cannot be listed: %v", gkText, err)
				continue
			}
			for i := range list.Items {
				item := &list.Items[i]
				mid := object.ID{Group: gk.Group, Kind: gk.Kind, Namespace: item.GetNamespace(), Name: item.GetName()}
				p.candidate(mid, owned)
			}
		}
	}
}
