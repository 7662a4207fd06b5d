package object

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ID identifies an object the way kubectl diff names its files.
type ID struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// IDOf returns the identity of an unstructured object as written.
// An object that has only metadata.generateName is named by that prefix.
func IDOf(u *unstructured.Unstructured) ID {
	gvk := u.GroupVersionKind()
	return ID{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: cmp.Or(u.GetName(), u.GetGenerateName())}
}

// GVK returns the group, version and kind.
func (id ID) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind}
}

// GroupKind returns the group and kind.
func (id ID) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: id.Group, Kind: id.Kind}
}

// String is a compact dotted form: apps.v1.Deployment.shop.web, v1.Secret.shop.db,
// rbac.authorization.k8s.io.v1.ClusterRole.view (cluster-scoped: no namespace part).
// It is not kubectl diff's file name, which keeps an empty namespace (the report's
// kubectlName).
func (id ID) String() string {
	parts := make([]string, 0, 5)
	if id.Group != "" {
		parts = append(parts, id.Group)
	}
	parts = append(parts, id.Version, id.Kind)
	if id.Namespace != "" {
		parts = append(parts, id.Namespace)
	}
	parts = append(parts, id.Name)
	return strings.Join(parts, ".")
}

// Display is the human form used in messages: "apps/v1 Deployment shop/web".
func (id ID) Display() string {
	gv := id.Version
	if id.Group != "" {
		gv = id.Group + "/" + id.Version
	}
	if id.Namespace == "" {
		return fmt.Sprintf("%s %s %s", gv, id.Kind, id.Name)
	}
	return fmt.Sprintf("%s %s %s/%s", gv, id.Kind, id.Namespace, id.Name)
}

// Key is the identity without the version: two versions of one object are the same object.
type Key struct {
	Group, Kind, Namespace, Name string
}

// Key returns the version-less identity.
func (id ID) Key() Key {
	return Key{Group: id.Group, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}
}

// Less orders identities by group, kind, namespace, name, then version.
func Less(a, b ID) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Version < b.Version
}
