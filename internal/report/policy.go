package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/drift-gitops/drift/internal/config"
)

// Policy is what a run was asked to fail on (--fail-on, drift.yaml's failOn) and what
// of it the report holds.
type Policy struct {
	// FailOn are the conditions asked for, in config.FailOnValues' order.
	FailOn []string `json:"failOn"`
	// Failed is true when the report meets one of them; Because says which, with the
	// counts ("2 risky objects").
	Failed  bool     `json:"failed"`
	Because []string `json:"because,omitempty"`
}

// ApplyPolicy judges the report by failOn (values of config.FailOnValues, in any
// order, repeated or not) and records the outcome on it; no values, no policy.
func (r *Report) ApplyPolicy(failOn []string) error {
	if err := config.CheckFailOn(failOn); err != nil {
		return err
	}
	if len(failOn) == 0 {
		r.Policy = nil
		return nil
	}
	p := &Policy{}
	for _, v := range config.FailOnValues {
		if slices.Contains(failOn, v) {
			p.FailOn = append(p.FailOn, v)
		}
	}
	s := r.Summary
	for _, v := range p.FailOn {
		switch {
		case v == "error" && s.Error > 0:
			p.Because = append(p.Because, Plural(s.Error, "error", "errors"))
		case v == "risk" && s.Risky > 0:
			p.Because = append(p.Because, Plural(s.Risky, "risky object", "risky objects"))
		case v == "delete" && s.Delete > 0:
			p.Because = append(p.Because, Plural(s.Delete, "deletion", "deletions"))
		case v == "change" && s.Changes() > 0:
			p.Because = append(p.Because, Plural(s.Changes(), "change", "changes"))
		}
	}
	p.Failed = len(p.Because) > 0
	r.Policy = p
	return nil
}

// PolicyFailed reports whether the report fails its policy.
func (r *Report) PolicyFailed() bool { return r.Policy != nil && r.Policy.Failed }

// PolicyNote says why the policy fails: "Policy failed (--fail-on risk,delete): 2
// risky objects, 1 deletion."
func (r *Report) PolicyNote() string {
	if !r.PolicyFailed() {
		return ""
	}
	return fmt.Sprintf("Policy failed (fail on %s): %s.", strings.Join(r.Policy.FailOn, ", "), strings.Join(r.Policy.Because, ", "))
}
