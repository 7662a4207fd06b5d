package risk

import (
	"fmt"
	"sort"
	"strings"
)

// grant is one permission a rule gives: a verb on a group's resource, or on a URL.
type grant struct{ group, resource, verb string }

func (g grant) String() string {
	if g.group == "" {
		return g.verb + " " + g.resource
	}
	return g.verb + " " + g.resource + "." + g.group
}

// grants expands a role's rules (resource names are ignored: a rule limited to
// names grants no more than the same rule without them).
func grants(obj map[string]any) []grant {
	rules, _ := nested(obj, "rules")
	items, _ := rules.([]any)
	var out []grant
	for _, it := range items {
		r, _ := it.(map[string]any)
		verbs := strs(r["verbs"])
		for _, url := range strs(r["nonResourceURLs"]) {
			for _, v := range verbs {
				out = append(out, grant{resource: url, verb: v})
			}
		}
		groups := strs(r["apiGroups"])
		for _, g := range groups {
			for _, res := range strs(r["resources"]) {
				for _, v := range verbs {
					out = append(out, grant{group: g, resource: res, verb: v})
				}
			}
		}
	}
	return out
}

// covers reports whether have grants g, wildcards included.
func covers(have []grant, g grant) bool {
	match := func(pattern, v string) bool {
		return pattern == v || pattern == "*" || (strings.HasSuffix(pattern, "*") && strings.HasPrefix(v, strings.TrimSuffix(pattern, "*")))
	}
	for _, h := range have {
		if match(h.group, g.group) && match(h.resource, g.resource) && match(h.verb, g.verb) {
			return true
		}
	}
	return false
}

func rbacWidened(c Change) []string {
	k := gk(c)
	if k != "rbac.authorization.k8s.io/Role" && k != "rbac.authorization.k8s.io/ClusterRole" {
		return nil
	}
	after := grants(c.Merged)
	switch c.Category {
	case Add:
		var wild []string
		for _, g := range after {
			if g.group == "*" || g.resource == "*" || g.verb == "*" {
				wild = append(wild, g.String())
			}
		}
		if len(wild) > 0 {
			return []string{"grants `*`: " + list(dedupe(wild), 5)}
		}
	case Modify:
		before := grants(c.Live)
		var added []string
		for _, g := range after {
			if !covers(before, g) {
				added = append(added, g.String())
			}
		}
		if len(added) > 0 {
			return []string{"grants more: " + list(dedupe(added), 5)}
		}
	}
	return nil
}

// privilegedSubject reports whether s is a system: group other than system:masters:
// every authenticated user, every anonymous request, every service account.
func privilegedSubject(s map[string]any) bool {
	kind, _ := s["kind"].(string)
	name, _ := s["name"].(string)
	return kind == "Group" && strings.HasPrefix(name, "system:") && name != "system:masters"
}

func rbacPrivilegedBinding(c Change) []string {
	k := gk(c)
	if k != "rbac.authorization.k8s.io/RoleBinding" && k != "rbac.authorization.k8s.io/ClusterRoleBinding" {
		return nil
	}
	if c.Category != Add && c.Category != Modify {
		return nil
	}
	var out []string
	role, _ := str(c.Merged, "roleRef", "name")
	roleKind, _ := str(c.Merged, "roleRef", "kind")
	oldRole, _ := str(c.Live, "roleRef", "name")
	subjects := subjectsOf(c.Merged)
	oldSubjects := map[string]bool{}
	for _, s := range subjectsOf(c.Live) {
		oldSubjects[s] = true
	}
	if roleKind == "ClusterRole" && role == "cluster-admin" {
		var added []string
		for _, s := range subjects {
			if oldRole != role || !oldSubjects[s] {
				added = append(added, s)
			}
		}
		if len(added) > 0 {
			out = append(out, "binds cluster-admin to "+list(added, 5))
		}
	}
	items, _ := c.Merged["subjects"].([]any)
	var groups []string
	for _, it := range items {
		s, _ := it.(map[string]any)
		if privilegedSubject(s) && (!oldSubjects[subjectName(s)] || oldRole != role) {
			groups = append(groups, subjectName(s))
		}
	}
	if len(groups) > 0 {
		out = append(out, fmt.Sprintf("binds %s %s to %s", roleKind, role, list(groups, 5)))
	}
	return out
}

func subjectsOf(obj map[string]any) []string {
	items, _ := obj["subjects"].([]any)
	var out []string
	for _, it := range items {
		s, _ := it.(map[string]any)
		out = append(out, subjectName(s))
	}
	sort.Strings(out)
	return out
}

func subjectName(s map[string]any) string {
	kind, _ := s["kind"].(string)
	name, _ := s["name"].(string)
	if ns, _ := s["namespace"].(string); ns != "" {
		name = ns + "/" + name
	}
	return kind + " " + name
}

func strs(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
