// Package policy judges a report by what a run was asked to fail on (--fail-on,
// drift.yaml's failOn) and records the outcome on it, which the exit code follows.
package policy

import (
	"slices"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/report"
)

// Apply judges the report by failOn (values of config.FailOnValues, in any
// order, repeated or not) and records the outcome on it; no values, no policy.
func Apply(r *report.Report, failOn []string) error {
	if err := config.CheckFailOn(failOn); err != nil {
		return err
	}
	if len(failOn) == 0 {
		r.Policy = nil
		return nil
	}
	p := &report.Policy{}
	for _, v := range config.FailOnValues {
		if slices.Contains(failOn, v) {
			p.FailOn = append(p.FailOn, v)
		}
	}
	s := r.Summary
	for _, v := range p.FailOn {
		switch {
		case v == "error" && s.Error > 0:
			p.Because = append(p.Because, report.Plural(s.Error, "error", "errors"))
		case v == "risk" && s.Risky > 0:
			p.Because = append(p.Because, report.Plural(s.Risky, "risky object", "risky objects"))
		case v == "delete" && s.Delete > 0:
			p.Because = append(p.Because, report.Plural(s.Delete, "deletion", "deletions"))
		case v == "change" && s.Changes() > 0:
			p.Because = append(p.Because, report.Plural(s.Changes(), "change", "changes"))
		}
	}
	p.Failed = len(p.Because) > 0
	r.Policy = p
	return nil
}
