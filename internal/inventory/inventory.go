// Package inventory is how appliers record, in the cluster, what they applied: the
// inventory objects a repository renders (kubectl's apply-config object of the "apply
// --prune with apply-config objects" design, an ApplySet parent of KEP-3659, a
// cli-utils inventory ConfigMap), found among a target's objects, and the marks an
// applier leaves on its members. internal/prune reads them; an ephemeral server is
// loaded with them.
package inventory

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// Format is an inventory's kind of record.
type Format string

// Formats of inventories.
const (
	ApplyConfig Format = "apply-config"
	ApplySet    Format = "applyset"
	CLIUtils    Format = "cli-utils"
)

// The labels and annotations of the formats: the apply-config object and its
// members', an ApplySet parent's and its members', a cli-utils inventory's and its
// members'.
const (
	ApplyConfigLabel     = "kubectl.kubernetes.io/apply-cfg"
	ApplyHashLabel       = "kubectl.kubernetes.io/apply-hash"
	LastAppliedObjects   = "kubectl.kubernetes.io/last-applied-objects"
	ApplyOwnerAnnotation = "kubectl.kubernetes.io/apply-owner"
	ApplySetIDLabel      = "applyset.kubernetes.io/id"
	ApplySetPartOfLabel  = "applyset.kubernetes.io/part-of"
	ApplySetGroupKinds   = "applyset.kubernetes.io/contains-group-kinds"
	ApplySetNamespaces   = "applyset.kubernetes.io/additional-namespaces"
	ApplySetTooling      = "applyset.kubernetes.io/tooling"
	CLIUtilsInventoryID  = "cli-utils.sigs.k8s.io/inventory-id"
	CLIUtilsOwner        = "config.k8s.io/owning-inventory"
)

// Inventory is one inventory of a target, whichever its format.
type Inventory struct {
	Format Format
	// Obj is the inventory object as the target renders it.
	Obj render.Object
	// Name is "apply-config ConfigMap shop/inventory", for the report.
	Name string
}

// ApplyHash is drift's definition of the apply-hash label, which the design leaves
// open: the lowercase hex SHA-256 of the last-applied-objects annotation's text, cut to
// 63 characters, the longest a label value may be.
func ApplyHash(annotation string) string {
	sum := sha256.Sum256([]byte(annotation))
	return hex.EncodeToString(sum[:])[:63]
}

// ApplySetID is the id KEP-3659 gives a parent: applyset-<base64url(sha256(
// name.namespace.kind.group))>-v1.
func ApplySetID(name, namespace, kind, group string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, namespace, kind, group}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// Find finds the inventory objects among a target's rendered objects. Two
// apply-config objects in one target are an error on both.
func Find(objs []render.Object) ([]Inventory, []render.Failure) {
	var invs []Inventory
	var applyCfgs []render.Object
	for _, o := range objs {
		if !o.Mentions(ApplyConfigLabel, ApplySetIDLabel, CLIUtilsInventoryID) {
			continue
		}
		labels := o.Get().GetLabels()
		id := o.ID()
		switch {
		case labels[ApplyConfigLabel] == "true":
			applyCfgs = append(applyCfgs, o)
		case labels[ApplySetIDLabel] != "":
			invs = append(invs, Inventory{Format: ApplySet, Obj: o, Name: "ApplySet " + id.Kind + " " + DisplayName(id)})
		case id.Group == "" && id.Kind == "ConfigMap" && labels[CLIUtilsInventoryID] != "":
			invs = append(invs, Inventory{Format: CLIUtils, Obj: o, Name: "cli-utils inventory ConfigMap " + DisplayName(id)})
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
		invs = append(invs, Inventory{Format: ApplyConfig, Obj: o, Name: "apply-config " + id.Kind + " " + DisplayName(id)})
	}
	return invs, fails
}

// DisplayName is "namespace/name", or the name of a cluster-scoped object.
func DisplayName(id object.ID) string {
	if id.Namespace == "" {
		return id.Name
	}
	return id.Namespace + "/" + id.Name
}

// Listed are the objects the apply-config object's last-applied-objects annotation
// lists, one namespace:group:kind:name a line; lines of another shape are left out.
func Listed(annotation string) []object.ID {
	var out []object.ID
	for _, line := range strings.Split(annotation, "\n") {
		if parts := strings.Split(strings.TrimSpace(line), ":"); len(parts) == 4 {
			out = append(out, object.ID{Namespace: parts[0], Group: parts[1], Kind: parts[2], Name: parts[3]})
		}
	}
	return out
}

// Record is what an applier writes when it applies an inventory's members: the merge
// patch of the inventory object (nil: none) and the metadata it marks each member
// with. uid is the live inventory object's (the apply-config format's owner mark).
func (inv Inventory) Record(members []object.ID, uid string) (patch, mark map[string]any) {
	switch inv.Format {
	case ApplyConfig:
		return nil, map[string]any{"annotations": map[string]any{ApplyOwnerAnnotation: uid}}
	case CLIUtils:
		data := map[string]any{}
		for _, m := range members {
			data[fmt.Sprintf("%s_%s_%s_%s", m.Namespace, m.Name, m.Group, m.Kind)] = ""
		}
		return map[string]any{"data": data}, map[string]any{"annotations": map[string]any{CLIUtilsOwner: inv.Obj.Get().GetLabels()[CLIUtilsInventoryID]}}
	case ApplySet:
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
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				ApplySetGroupKinds: strings.Join(gks, ","), ApplySetTooling: "drift/ephemeral"}}},
			map[string]any{"labels": map[string]any{ApplySetPartOfLabel: inv.Obj.Get().GetLabels()[ApplySetIDLabel]}}
	}
	return nil, nil
}
