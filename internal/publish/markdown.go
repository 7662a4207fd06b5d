package publish

import (
	"bytes"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/report"
)

// The markdown variants a run publishes.
var (
	// jobSummary is the full report, within GitHub's 1 MiB for a job summary.
	jobSummary = report.MarkdownOptions{MaxBytes: 1 << 20}
	// commentBody is what fits a comment: diffs added while they fit.
	commentBody = report.MarkdownOptions{MaxBytes: github.MaxCommentBytes}
	// summaryOnly is the title and the table: the comment GitHub found too long after
	// all, and the check run's summary.
	summaryOnly = report.MarkdownOptions{SummaryOnly: true}
)

// markdown renders each variant of one report on first use and keeps it: a large
// report is rendered at most once per variant, and never in a variant nothing asked
// for.
type markdown struct {
	rep  *report.Report
	done map[report.MarkdownOptions]string
}

func newMarkdown(rep *report.Report) *markdown {
	return &markdown{rep: rep, done: map[report.MarkdownOptions]string{}}
}

func (m *markdown) get(opts report.MarkdownOptions) (string, error) {
	if s, ok := m.done[opts]; ok {
		return s, nil
	}
	var buf bytes.Buffer
	if err := report.WriteMarkdown(&buf, m.rep, opts); err != nil {
		return "", err
	}
	m.done[opts] = buf.String()
	return m.done[opts], nil
}
