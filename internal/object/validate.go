package object

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// NameRule is how the API server checks the names of one kind: a description for
// messages and apimachinery's check (prefix is true for metadata.generateName).
type NameRule struct {
	Desc  string
	Check func(name string, prefix bool) []string
}

// The API server's name rules, from k8s.io/apimachinery/pkg/api/validation.
var (
	// PathSegment is what every object's name must be: it is a segment of its URL.
	PathSegment = NameRule{Desc: "a path segment", Check: path.ValidatePathSegmentName}
	// DNSSubdomain is the rule of most built-in kinds and of every custom resource.
	DNSSubdomain = NameRule{Desc: "a DNS subdomain (RFC 1123)", Check: validation.NameIsDNSSubdomain}
	// DNSLabel is the rule of namespaces.
	DNSLabel = NameRule{Desc: "a DNS label (RFC 1123)", Check: validation.NameIsDNSLabel}
	// DNS1035Label is the rule of Services.
	DNS1035Label = NameRule{Desc: "a DNS label (RFC 1035)", Check: validation.NameIsDNS1035Label}
)

// pathSegmentKinds are the built-in kinds whose names need only be path segments
// (RBAC names such as "system:aggregate-to-view").
var pathSegmentKinds = map[schema.GroupKind]bool{
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

// NameRuleFor is the rule the API server applies to names of a kind: a DNS
// subdomain unless the kind is known to differ. Custom resources always take the
// DNS subdomain rule.
func NameRuleFor(gk schema.GroupKind) NameRule {
	switch {
	case pathSegmentKinds[gk]:
		return PathSegment
	case gk == NamespaceKind:
		return DNSLabel
	case gk == schema.GroupKind{Kind: "Service"}:
		return DNS1035Label
	default:
		return DNSSubdomain
	}
}

// InvalidError is an identity the API server would refuse: which field, its value and
// the rule it breaks.
type InvalidError struct {
	Field, Value, Rule string
	Problems           []string
}

func (e *InvalidError) Error() string {
	// %q: a hostile value may hold newlines or control characters.
	return fmt.Sprintf("%s %q is not %s: %s", e.Field, e.Value, e.Rule, strings.Join(e.Problems, "; "))
}

// Validate checks an identity as the API server checks it before it stores anything:
// the group a DNS subdomain, the version and the lower-cased kind DNS labels (RFC 1035,
// the CustomResourceDefinition rules, which every built-in kind meets too), the
// namespace a DNS label, and the name a path segment and then rule (nil rule: a path
// segment only). generated says the name is a metadata.generateName prefix. It returns
// nil or one *InvalidError per broken field, joined, in field order.
//
// Nothing here is only about file names: an identity that passes is one the server
// could hold, and kubectl diff's file name of it (String) is one path element.
func Validate(id ID, generated bool, rule *NameRule) error {
	var errs []error
	add := func(field, value, desc string, problems []string) {
		if len(problems) > 0 {
			errs = append(errs, &InvalidError{Field: field, Value: value, Rule: desc, Problems: problems})
		}
	}
	if id.Group != "" {
		add("the apiVersion's group", id.Group, "a DNS subdomain (RFC 1123)", utilvalidation.IsDNS1123Subdomain(id.Group))
	}
	add("the apiVersion's version", id.Version, "a DNS label (RFC 1035)", utilvalidation.IsDNS1035Label(id.Version))
	add("kind", id.Kind, "a DNS label (RFC 1035) once lower-cased", utilvalidation.IsDNS1035Label(strings.ToLower(id.Kind)))
	if id.Namespace != "" {
		add("metadata.namespace", id.Namespace, DNSLabel.Desc, validation.ValidateNamespaceName(id.Namespace, false))
	}
	field := "metadata.name"
	if generated {
		field = "metadata.generateName"
	}
	if id.Name == "" && !generated {
		add(field, id.Name, PathSegment.Desc, []string{"may not be empty"})
	} else if problems := PathSegment.Check(id.Name, generated); len(problems) > 0 {
		add(field, id.Name, PathSegment.Desc, problems)
	} else if rule != nil {
		add(field, id.Name, rule.Desc, rule.Check(id.Name, generated))
	}
	return errors.Join(errs...)
}

// CheckFileName refuses a file name that is not one plain path element: empty, "."
// or "..", a separator of any platform, or a control character (a NUL cannot be
// written; a newline would break the lines of a diff header naming the file).
func CheckFileName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("file name %q is not a single path element", name)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("file name %q holds a path separator", name)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("file name %q holds a control character", name)
	}
	return nil
}
