package object

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestValidateRejectsHostileIdentitiesWithTheRule(t *testing.T) {
	t.Parallel()
	cr := func(ns, name string) ID {
		return ID{Group: "example.com", Version: "v1", Kind: "Gadget", Namespace: ns, Name: name}
	}
	dns := DNSSubdomain
	tests := []struct {
		name      string
		id        ID
		generated bool
		rule      *NameRule
		field     string // "" means valid
		rulePart  string
	}{
		{name: "traversal name", id: cr("shop", "x/../../escape"), rule: &dns, field: "metadata.name", rulePart: "may not contain '/'"},
		{name: "traversal name, path rule only", id: cr("shop", "x/../../escape"), field: "metadata.name", rulePart: "a path segment"},
		{name: "dot-dot", id: cr("shop", ".."), rule: &dns, field: "metadata.name", rulePart: "may not be '..'"},
		{name: "dot", id: cr("shop", "."), rule: &dns, field: "metadata.name", rulePart: "may not be '.'"},
		{name: "percent", id: cr("shop", "a%2fb"), rule: &dns, field: "metadata.name", rulePart: "may not contain '%'"},
		{name: "NUL", id: cr("shop", "a\x00b"), rule: &dns, field: "metadata.name", rulePart: "RFC 1123 subdomain"},
		{name: "newline", id: cr("shop", "a\nb"), rule: &dns, field: "metadata.name", rulePart: "RFC 1123 subdomain"},
		{name: "254 characters", id: cr("shop", strings.Repeat("a", 254)), rule: &dns, field: "metadata.name", rulePart: "no more than 253 characters"},
		{name: "uppercase name", id: cr("shop", "Web"), rule: &dns, field: "metadata.name", rulePart: "RFC 1123 subdomain"},
		{name: "empty name", id: cr("shop", ""), field: "metadata.name", rulePart: "may not be empty"},
		{name: "traversal generateName", id: cr("shop", "../x-"), generated: true, rule: &dns, field: "metadata.generateName", rulePart: "may not contain '/'"},
		{name: "uppercase namespace", id: cr("Shop", "web"), rule: &dns, field: "metadata.namespace", rulePart: "RFC 1123 label"},
		{name: "traversal namespace", id: cr("../../etc", "web"), rule: &dns, field: "metadata.namespace", rulePart: "RFC 1123 label"},
		{name: "traversal kind", id: ID{Group: "example.com", Version: "v1", Kind: "../Gadget", Name: "web"}, field: "kind", rulePart: "RFC 1035"},
		{name: "traversal group", id: ID{Group: "../example.com", Version: "v1", Kind: "Gadget", Name: "web"}, field: "the apiVersion's group", rulePart: "RFC 1123 subdomain"},
		{name: "traversal version", id: ID{Group: "example.com", Version: "..", Kind: "Gadget", Name: "web"}, field: "the apiVersion's version", rulePart: "RFC 1035"},
		{name: "no version", id: ID{Kind: "ConfigMap", Name: "web"}, field: "the apiVersion's version", rulePart: "RFC 1035"},

		{name: "custom resource", id: cr("shop", "web.v2"), rule: &dns},
		{name: "generateName prefix", id: cr("shop", "job-"), generated: true, rule: &dns},
		{name: "cluster-scoped", id: ID{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "system:aggregate-to-view"}},
		{name: "core", id: ID{Version: "v1", Kind: "ConfigMap", Namespace: "kube-system", Name: "coredns"}, rule: &dns},
		{name: "253 characters", id: cr("shop", strings.Repeat("a", 253)), rule: &dns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tt.id, tt.generated, tt.rule)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("a valid identity is refused: %v", err)
				}
				return
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("want an *InvalidError for %s, got %v", tt.field, err)
			}
			if inv.Field != tt.field || !strings.Contains(err.Error(), tt.rulePart) {
				t.Fatalf("want %s breaking %q, got %s: %v", tt.field, tt.rulePart, inv.Field, err)
			}
			if strings.ContainsAny(err.Error(), "\n\x00") {
				t.Fatalf("the message carries the raw value: %q", err.Error())
			}
		})
	}
}

func TestNameRuleForFollowsTheServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gk   schema.GroupKind
		want string
	}{
		{schema.GroupKind{Kind: "ConfigMap"}, DNSSubdomain.Desc},
		{schema.GroupKind{Group: "example.com", Kind: "Gadget"}, DNSSubdomain.Desc},
		{schema.GroupKind{Kind: "Namespace"}, DNSLabel.Desc},
		{schema.GroupKind{Kind: "Service"}, DNS1035Label.Desc},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, PathSegment.Desc},
	}
	for _, tt := range tests {
		t.Run(tt.gk.String(), func(t *testing.T) {
			t.Parallel()
			if got := NameRuleFor(tt.gk).Desc; got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCheckFileNameAllowsOnlyOnePlainElement(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
	}{
		{"apps.v1.Deployment.shop.web", true},
		{"rbac.authorization.k8s.io.v1.ClusterRole.system:view", true},
		{"", false}, {".", false}, {"..", false},
		{"v1.ConfigMap.shop.x/../../escape", false},
		{`v1.ConfigMap.shop.a\b`, false},
		{"v1.ConfigMap.shop.a\x00b", false},
		{"v1.ConfigMap.shop.a\nb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := CheckFileName(tt.name); (err == nil) != tt.ok {
				t.Fatalf("CheckFileName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
			}
		})
	}
}
