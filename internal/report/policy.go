package report

import (
	"fmt"
	"strings"
)

// Policy is what a run was asked to fail on (--fail-on, drift.yaml's failOn) and what
// of it the report holds.
type Policy struct {
	// FailOn are the conditions asked for, in config.FailOnValues' order
	// (internal/policy records them).
	FailOn []string `json:"failOn"`
	// Failed is true when the report meets one of them; Because says which, with the
	// counts ("2 risky objects").
	Failed  bool     `json:"failed"`
	Because []string `json:"because,omitempty"`
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
