package config

import (
	"path"
	"slices"
)

// Rules are a target's noise rules from drift.yaml: fields left out of comparison and
// output, and values shown masked.
type Rules struct {
	Ignore []IgnoreRule
	Mask   []MaskRule
}

// Managers are the field managers whose fields the ignore rules leave out of the
// comparison of the object named (patterns, as path.Match takes them).
func (r Rules) Managers(group, kind, namespace, name string) []string {
	var managers []string
	for _, rule := range r.Ignore {
		if rule.Matches(group, kind, namespace, name) {
			managers = append(managers, rule.Managers...)
		}
	}
	return managers
}

// Masks reports whether a mask rule masks fields of the object named.
func (r Rules) Masks(group, kind, namespace, name string) bool {
	return slices.ContainsFunc(r.Mask, func(rule MaskRule) bool {
		return rule.Matches(group, kind, namespace, name) && len(rule.Paths) > 0
	})
}

// ManagerMatches reports whether a field manager's name matches one of an ignore
// rule's manager patterns (path.Match's).
func ManagerMatches(patterns []string, manager string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, _ := path.Match(p, manager)
		return ok
	})
}

// Change is the configuration file on both sides of a pull request, and what of the
// head's the run did not use because only the base may say it.
type Change struct {
	File        string
	TrustedFrom string
	Base, Head  string
	NotApplied  []string
}
