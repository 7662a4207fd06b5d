package entry

import (
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/scrub"
)

// Scrub scrubs a report already built (drift report merge's, of shards each of which
// knew only its own values) as Build scrubs one: idempotent, what is hidden stays
// hidden.
func Scrub(s *scrub.Scrubber, rep *report.Report) { scrubReport(s, rep) }

// scrubReport scrubs every message of the report: errors, warnings, notes, reasons,
// what changed and the configuration's diff, and the objects' YAML and diffs again
// line by line. Objects' values were scrubbed as their entries were built.
func scrubReport(s *scrub.Scrubber, rep *report.Report) {
	msg := func(text string) string { return report.LineText(s.Scrub(text)) }
	for i := range rep.Targets {
		t := &rep.Targets[i]
		t.Skipped = msg(t.Skipped)
		for j := range t.Notes {
			t.Notes[j] = msg(t.Notes[j])
		}
		for j := range t.Kept {
			t.Kept[j].Reason = msg(t.Kept[j].Reason)
		}
		for _, objs := range [][]report.Object{t.Objects, t.Drift} {
			for j := range objs {
				o := &objs[j]
				o.Error = msg(o.Error)
				for k := range o.Warnings {
					o.Warnings[k].Message = msg(o.Warnings[k].Message)
				}
				for k := range o.Risks {
					o.Risks[k].Message = msg(o.Risks[k].Message)
				}
				o.What = msg(o.What)
				for k := range o.Changes {
					c := &o.Changes[k]
					c.Path, c.Before, c.After = s.Scrub(c.Path), s.Value(c.Before), s.Value(c.After)
				}
				// Scalars were scrubbed before the YAML was rendered; this catches keys,
				// and values split over lines, which show only line by line.
				o.Diff, o.FromYAML, o.ToYAML = s.YAML(o.Diff), s.YAML(o.FromYAML), s.YAML(o.ToYAML)
			}
		}
	}
	if c := rep.Config; c != nil {
		c.Diff = s.YAML(c.Diff)
		for i := range c.NotApplied {
			c.NotApplied[i] = msg(c.NotApplied[i])
		}
	}
}
