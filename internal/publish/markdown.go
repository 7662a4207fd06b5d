package publish

import (
	"bytes"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
)

// The markdown variants a run publishes.
var (
	// jobSummary is the full report, within GitHub's 1 MiB for a job summary.
	jobSummary = write.MarkdownOptions{MaxBytes: 1 << 20}
	// commentBody is what fits a comment: diffs added while they fit.
	commentBody = write.MarkdownOptions{MaxBytes: github.MaxCommentBytes}
	// summaryOnly is the title and the table: the comment GitHub found too long after
	// all, and the check run's summary.
	summaryOnly = write.MarkdownOptions{SummaryOnly: true}
	// checkText is the check run's text: the details the comment had no room for,
	// within the check run's own budget.
	checkText = write.MarkdownOptions{MaxBytes: github.MaxCheckOutput, AfterComment: github.MaxCommentBytes}
)

// markdown renders each variant of one report on first use and keeps it: a large
// report is rendered at most once per variant, and never in a variant nothing asked
// for.
type markdown struct {
	rep  *report.Report
	done map[write.MarkdownOptions]string
	// fullReport points to the job summary (a link to the run when known), and
	// template is the user's markdown template: both apply to every variant.
	fullReport, template string
	// htmlReport says where the HTML report is, in markdown ("" when nowhere).
	htmlReport string
}

func newMarkdown(rep *report.Report, template string) *markdown {
	return &markdown{rep: rep, done: map[write.MarkdownOptions]string{}, template: template}
}

func (m *markdown) get(variant write.MarkdownOptions) (string, error) {
	if s, ok := m.done[variant]; ok {
		return s, nil
	}
	opts := variant
	opts.FullReport, opts.Template, opts.HTMLReport = m.fullReport, m.template, m.htmlReport
	var buf bytes.Buffer
	if err := write.Markdown(&buf, m.rep, opts); err != nil {
		return "", err
	}
	m.done[variant] = buf.String()
	return m.done[variant], nil
}
