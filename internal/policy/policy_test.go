package policy_test

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/policy"
	"github.com/drift-gitops/drift/internal/report"
)

// TestPolicy: each condition fails the report when its count is above zero, the
// note names the conditions in config.FailOnValues' order with their counts, and an
// unknown value is refused naming the known ones.
func TestPolicy(t *testing.T) {
	rep := &report.Report{Complete: true, Summary: report.Summary{Add: 2, Modify: 1, Risky: 1}}
	for _, c := range []struct {
		failOn []string
		failed bool
		note   string
	}{
		{nil, false, ""},
		{[]string{"delete"}, false, ""},
		{[]string{"error"}, false, ""},
		{[]string{"risk"}, true, "Policy failed (fail on risk): 1 risky object."},
		{[]string{"change", "risk", "risk"}, true, "Policy failed (fail on risk, change): 1 risky object, 3 changes."},
	} {
		if err := policy.Apply(rep, c.failOn); err != nil {
			t.Fatal(err)
		}
		if rep.PolicyFailed() != c.failed || rep.PolicyNote() != c.note {
			t.Errorf("fail on %v: failed=%v note=%q", c.failOn, rep.PolicyFailed(), rep.PolicyNote())
		}
	}
	rep.Summary.Error = 2
	if err := policy.Apply(rep, []string{"error", "delete"}); err != nil || rep.PolicyNote() != "Policy failed (fail on error, delete): 2 errors." {
		t.Errorf("fail on error: %v, note %q", err, rep.PolicyNote())
	}
	if err := policy.Apply(rep, []string{"risky"}); err == nil || !strings.Contains(err.Error(), "error, risk, delete, change") {
		t.Errorf("an unknown value: %v", err)
	}
}
