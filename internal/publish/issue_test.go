package publish

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// TestDriftIssueFollowsTheDrift: a scheduled drift check (no pull request) keeps one
// issue: nothing while there is no drift, opened with the label when drift appears,
// left alone while the drift is the same, updated when it changes, closed with a
// comment when it is gone, reopened when it comes back.
func TestDriftIssueFollowsTheDrift(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	kv := map[string]string{"k": "v"}
	calm := modified("calm", kv, kv) // live as the repository says: unchanged
	blue, red, green := map[string]string{"color": "blue"}, map[string]string{"color": "red"}, map[string]string{"color": "green"}
	steps := []struct {
		name   string
		rep    *report.Report
		said   string
		writes bool
	}{
		{"no drift", driftCheck(t, calm), "drift: nothing to do (no drift, no open issue)\n", false},
		{"drift appears", driftCheck(t, calm, modified("settings", red, blue)), "drift: opened issue #1\n", true},
		{"the same drift", driftCheck(t, calm, modified("settings", red, blue)), "drift: issue #1 is up to date (the drift did not change)\n", false},
		{"more drift", driftCheck(t, modified("calm", map[string]string{"k": "changed"}, kv), modified("settings", red, blue)), "drift: updated issue #1\n", true},
		{"drift gone", driftCheck(t, calm), "drift: closed issue #1\n", true},
		{"drift back", driftCheck(t, calm, modified("settings", green, blue)), "drift: reopened issue #1\n", true},
	}
	for _, s := range steps {
		writes := h.srv.Writes
		said, err := h.publish(t, s.rep, Options{Issue: true})
		if err != nil || said != s.said {
			t.Fatalf("%s: %q %v, want %q", s.name, said, err, s.said)
		}
		if wrote := h.srv.Writes != writes; wrote != s.writes {
			t.Errorf("%s: wrote %t, want %t", s.name, wrote, s.writes)
		}
		if is := h.srv.Issues[1]; is != nil && is.State == "open" {
			if !strings.Contains(is.Title, s.rep.Summary.Headline()) || !strings.Contains(is.Body, "<!-- drift:fingerprint="+report.Fingerprint(s.rep)+" -->") ||
				!strings.Contains(is.Body, "### drift: drift detected: ") {
				t.Errorf("%s: issue = %+v", s.name, is)
			}
		}
	}
	if len(h.srv.Issues) != 1 || !h.srv.Labels["drift"] || h.srv.Issues[1].State != "open" {
		t.Errorf("issues = %+v, labels %v", h.srv.Issues, h.srv.Labels)
	}
	if c := h.srv.Comments(1); len(c) != 1 || !strings.Contains(c[0].Body, "matches the repository again") {
		t.Errorf("closing comment: %+v", c)
	}
	if len(h.srv.Comments(0))+len(h.srv.CheckRuns) != 0 {
		t.Error("the drift check commented or reported a check")
	}
}

// TestAnIncompleteDriftCheckOpensTheIssue: an object drift could not check may be
// drift; the issue says so rather than stay closed.
func TestAnIncompleteDriftCheckOpensTheIssue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	rep := driftCheck(t, failed("settings", "forbidden"))
	if rep.Summary.Changes() != 0 {
		t.Fatalf("the fixture has changes: %+v", rep.Summary)
	}
	if said, err := h.publish(t, rep, Options{Issue: true}); err != nil || said != "drift: opened issue #1\n" {
		t.Fatalf("%q %v", said, err)
	}
}
