package prune

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// The apply-config object of the "apply --prune with apply-config objects" design.
const (
	ApplyConfigLabel      = "kubectl.kubernetes.io/apply-cfg"
	ApplyHashLabel        = "kubectl.kubernetes.io/apply-hash"
	LastAppliedObjects    = "kubectl.kubernetes.io/last-applied-objects"
	ApplyOwnerAnnotation  = "kubectl.kubernetes.io/apply-owner"
	applySetIDLabel       = "applyset.kubernetes.io/id"
	applySetPartOfLabel   = "applyset.kubernetes.io/part-of"
	applySetGroupKinds    = "applyset.kubernetes.io/contains-group-kinds"
	applySetNamespaces    = "applyset.kubernetes.io/additional-namespaces"
	cliUtilsInventoryID   = "cli-utils.sigs.k8s.io/inventory-id"
	cliUtilsOwningInvAnno = "config.k8s.io/owning-inventory"
)

// ApplyHash is drift's definition of the apply-hash label, which the design leaves
// open: the lowercase hex SHA-256 of the last-applied-objects annotation's text, cut to
// 63 characters, the longest a label value may be.
func ApplyHash(annotation string) string {
	sum := sha256.Sum256([]byte(annotation))
	return hex.EncodeToString(sum[:])[:63]
}

// inventories finds the inventory objects among a target's rendered objects. Two
// apply-config objects in one target are an error on both.
func inventories(objs []render.Object) ([]inventory, []render.Failure) {
	var invs []inventory
	var applyCfgs []render.Object
	for _, o := range objs {
		labels := o.Obj.GetLabels()
		id := o.ID()
		switch {
		case labels[ApplyConfigLabel] == "true":
			applyCfgs = append(applyCfgs, o)
		case labels[applySetIDLabel] != "":
			invs = append(invs, inventory{format: FormatApplySet, obj: o, name: "ApplySet " + id.Kind + " " + displayName(id)})
		case id.Group == "" && id.Kind == "ConfigMap" && labels[cliUtilsInventoryID] != "":
			invs = append(invs, inventory{format: FormatCLIUtils, obj: o, name: "cli-utils inventory ConfigMap " + displayName(id)})
		}
	}
	var fails []render.Failure
	if len(applyCfgs) > 1 {
		var where []string
		for _, o := range applyCfgs {
			where = append(where, o.Where())
		}
		for _, o := range applyCfgs {
			id := o.ID()
			fails = append(fails, render.Failure{Source: o.Source, Doc: o.Doc, ID: &id, Reason: reason.Inventory,
				Message: fmt.Sprintf("the target has %d apply-config objects (label %s: \"true\"), at %s: keep one per target", len(applyCfgs), ApplyConfigLabel, strings.Join(where, ", "))})
		}
	} else if len(applyCfgs) == 1 {
		o := applyCfgs[0]
		id := o.ID()
		invs = append(invs, inventory{format: FormatApplyConfig, obj: o, name: "apply-config " + id.Kind + " " + displayName(id)})
	}
	return invs, fails
}

func displayName(id object.ID) string {
	if id.Namespace == "" {
		return id.Name
	}
	return id.Namespace + "/" + id.Name
}

// applyConfig prunes with an apply-config object: its live annotation lists the
// objects of the last apply, one namespace:group:kind:name per line; an object is
// owned when its apply-owner annotation holds the live apply-config object's UID.
func (p *pruner) applyConfig() {
	rendered := p.inv.obj.Obj
	if hash, ok := rendered.GetLabels()[ApplyHashLabel]; ok {
		if want := ApplyHash(rendered.GetAnnotations()[LastAppliedObjects]); hash != want {
			p.fail("label %s is %q but the %s annotation hashes to %q: the inventory was edited by hand; regenerate it with the tool that writes it (drift's hash: lowercase hex SHA-256 of the annotation, first 63 characters)", ApplyHashLabel, hash, LastAppliedObjects, want)
			return
		}
	}
	live, ok := p.liveInventory()
	if !ok {
		return
	}
	uid := string(live.GetUID())
	owned := func(obj *unstructured.Unstructured) (bool, string) {
		owner, ok := obj.GetAnnotations()[ApplyOwnerAnnotation]
		switch {
		case !ok:
			return false, fmt.Sprintf("it has no %s annotation: another tool or a person created or took it over", ApplyOwnerAnnotation)
		case owner != uid:
			return false, fmt.Sprintf("its %s annotation names %q, not this inventory (%s): it belongs to another apply", ApplyOwnerAnnotation, owner, uid)
		}
		return true, ""
	}
	for i, line := range strings.Split(live.GetAnnotations()[LastAppliedObjects], "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.Split(line, ":")
		if len(parts) != 4 || parts[2] == "" || parts[3] == "" {
			p.note("line %d of the live %s annotation, %q, is not namespace:group:kind:name: skipped", i+1, LastAppliedObjects, line)
			continue
		}
		id := object.ID{Namespace: parts[0], Group: parts[1], Kind: parts[2], Name: parts[3]}
		if _, m, err := p.resource(id.GroupKind(), id.Namespace); err == nil {
			if m.Scope.Name() == meta.RESTScopeNameNamespace && id.Namespace == "" {
				p.note("line %d of the live %s annotation, %q, names a namespaced kind without a namespace: skipped", i+1, LastAppliedObjects, line)
				continue
			}
		} else if meta.IsNoMatchError(err) {
			p.note("line %d of the live %s annotation names kind %s, which the cluster does not serve: skipped", i+1, LastAppliedObjects, id.GroupKind())
			continue
		}
		p.candidate(id, owned)
	}
}

// cliUtils prunes with a cli-utils (kpt) inventory ConfigMap: its live data keys are
// namespace_name_group_kind; an object is owned when its owning-inventory annotation
// holds the inventory id.
func (p *pruner) cliUtils() {
	invID := p.inv.obj.Obj.GetLabels()[cliUtilsInventoryID]
	live, ok := p.liveInventory()
	if !ok {
		return
	}
	if liveID := live.GetLabels()[cliUtilsInventoryID]; liveID != invID {
		p.fail("the live inventory's id is %q, the rendered one's %q: they are different inventories; fix the %s label", liveID, invID, cliUtilsInventoryID)
		return
	}
	owned := func(obj *unstructured.Unstructured) (bool, string) {
		owner, ok := obj.GetAnnotations()[cliUtilsOwningInvAnno]
		switch {
		case !ok:
			return false, fmt.Sprintf("it has no %s annotation: another tool or a person created or took it over", cliUtilsOwningInvAnno)
		case owner != invID:
			return false, fmt.Sprintf("its %s annotation names inventory %q, not %q", cliUtilsOwningInvAnno, owner, invID)
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

// ApplySetID is the id KEP-3659 gives a parent: applyset-<base64url(sha256(
// name.namespace.kind.group))>-v1.
func ApplySetID(name, namespace, kind, group string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, namespace, kind, group}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// applySet prunes with an ApplySet parent: members are the live objects labelled
// part-of=<id>, of the group-kinds and in the namespaces the live parent names.
func (p *pruner) applySet() {
	id := p.inv.obj.ID()
	ns := id.Namespace
	setID := p.inv.obj.Obj.GetLabels()[applySetIDLabel]
	if want := ApplySetID(id.Name, ns, id.Kind, id.Group); setID != want {
		p.fail("label %s is %q, but KEP-3659 gives this parent the id %q: the label does not belong to this object", applySetIDLabel, setID, want)
		return
	}
	live, ok := p.liveInventory()
	if !ok {
		return
	}
	if liveID := live.GetLabels()[applySetIDLabel]; liveID != setID {
		p.fail("the live parent's %s label is %q, not %q", applySetIDLabel, liveID, setID)
		return
	}
	namespaces := []string{}
	if ns != "" {
		namespaces = append(namespaces, ns)
	}
	for _, n := range strings.Split(live.GetAnnotations()[applySetNamespaces], ",") {
		if n = strings.TrimSpace(n); n != "" {
			namespaces = append(namespaces, n)
		}
	}
	owned := func(obj *unstructured.Unstructured) (bool, string) {
		if got := obj.GetLabels()[applySetPartOfLabel]; got != setID {
			return false, fmt.Sprintf("its %s label is %q, not %q", applySetPartOfLabel, got, setID)
		}
		return true, ""
	}
	for _, gkText := range strings.Split(live.GetAnnotations()[applySetGroupKinds], ",") {
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
				return res.List(ctx, metav1.ListOptions{LabelSelector: applySetPartOfLabel + "=" + setID})
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
