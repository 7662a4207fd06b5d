package object

import "k8s.io/apimachinery/pkg/runtime/schema"

// The kinds other objects need to exist first.
var (
	NamespaceKind = schema.GroupKind{Kind: "Namespace"}
	CRDKind       = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// IsScaffolding reports kinds other objects need to exist first: Namespaces and CRDs.
func IsScaffolding(gk schema.GroupKind) bool { return gk == NamespaceKind || gk == CRDKind }
