// Package risk finds what a reviewer must not miss in a change: deletes that lose
// data, objects that must be recreated, workloads disrupted, RBAC widened, images
// unpinned, Secrets changed, host access added. It reads the live object and the
// predicted one and nothing else; every rule is a row of one table (rules.go), named
// by a stable identifier that reports carry and drift.yaml can switch off.
package risk

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/object"
)

// Finding is one risk of one object: the rule that found it and what it found, in a
// few words ("container web: image nginx:1.25 → nginx:latest").
type Finding struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Change is one object's change as a report sees it. Live is absent for an addition,
// Merged for a deletion; ErrorReason is set when the preview failed (an immutable
// field is a risk too).
type Change struct {
	ID          object.ID
	Category    string
	Live        map[string]any
	Merged      map[string]any
	ErrorReason string
	// CustomResources, for a CustomResourceDefinition deleted, is how many custom
	// resources of it the cluster holds (nil: not counted; negative: at least -n-1).
	CustomResources *int64
}

// Categories of objects, as reports name them.
const (
	Add    = "add"
	Modify = "modify"
	Delete = "delete"
	Error  = "error"
)

// Rule is one row of the table: a stable name, what it means for the docs, and the
// check, which returns one message per finding.
type Rule struct {
	Name    string
	Summary string
	check   func(c Change) []string
}

// Rules returns the rules, by name.
func Rules() []Rule {
	out := append([]Rule(nil), rules...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Known reports whether name is a rule.
func Known(name string) bool {
	for _, r := range rules {
		if r.Name == name {
			return true
		}
	}
	return false
}

// Check validates rule names (drift.yaml's risks.disable).
func Check(names []string) error {
	for _, n := range names {
		if !Known(n) {
			return fmt.Errorf("unknown risk rule %q (known: %s)", n, ruleNames())
		}
	}
	return nil
}

// Names are the rules' names, sorted.
func Names() []string {
	var out []string
	for _, r := range Rules() {
		out = append(out, r.Name)
	}
	return out
}

func ruleNames() string { return strings.Join(Names(), ", ") }

// Evaluate runs every rule not disabled over c, in the table's order.
func Evaluate(c Change, disabled map[string]bool) []Finding {
	var out []Finding
	for _, r := range rules {
		if disabled[r.Name] {
			continue
		}
		for _, m := range r.check(c) {
			out = append(out, Finding{Rule: r.Name, Message: m})
		}
	}
	return out
}
