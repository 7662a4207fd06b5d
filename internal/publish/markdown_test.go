package publish

import (
	"slices"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report/write"
)

// TestEachMarkdownVariantIsRenderedOnceAndOnlyWhenNeeded: a run renders the job
// summary, the comment, the summary alone and the check's text at most once each (the
// summary alone serves both the too-long fallback and the check), and none that
// nothing asked for.
func TestEachMarkdownVariantIsRenderedOnceAndOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		opts    Options
		tooLong bool // GitHub refuses the full comment
		noJob   bool // outside Actions: no GITHUB_STEP_SUMMARY
		want    []write.MarkdownOptions
	}{
		{"comment and check", Options{Comment: true, Check: true}, false, false, []write.MarkdownOptions{jobSummary, commentBody, summaryOnly, checkText}},
		{"too long, then the check", Options{Comment: true, Check: true}, true, false, []write.MarkdownOptions{jobSummary, commentBody, summaryOnly, checkText}},
		{"comment alone", Options{Comment: true}, false, true, []write.MarkdownOptions{commentBody}},
		{"comment file", Options{CommentFile: "comment.md"}, false, true, []write.MarkdownOptions{commentBody}},
		{"job summary", Options{}, false, false, []write.MarkdownOptions{jobSummary}},
		{"outputs only", Options{Outputs: true}, false, false, nil},
		{"issue", Options{Issue: true}, false, true, []write.MarkdownOptions{commentBody}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 5)
			h.env["GITHUB_OUTPUT"] = h.path("output")
			if c.tooLong {
				h.srv.MaxBody = 1500
			}
			if c.noJob {
				delete(h.env, "GITHUB_STEP_SUMMARY")
			} else if !c.opts.Outputs {
				c.opts.GitHub.StepSummary = h.summary
			}
			if c.opts.CommentFile != "" {
				c.opts.CommentFile = h.path(c.opts.CommentFile)
			}
			r := newRun(preview(t, added("big", map[string]string{"blob": strings.Repeat("y", 3000)})), c.opts, h.deps())
			if err := r.publish(t.Context()); err != nil {
				t.Fatal(err)
			}
			var got []write.MarkdownOptions
			for _, v := range []write.MarkdownOptions{jobSummary, commentBody, summaryOnly, checkText} {
				if _, ok := r.md.done[v]; ok {
					got = append(got, v)
				}
			}
			if len(r.md.done) != len(got) || !slices.Equal(got, c.want) {
				t.Errorf("rendered %v, want %v", r.md.done, c.want)
			}
		})
	}
}

// TestAVariantIsKept: asked again, a variant is the first rendering, not a new one.
func TestAVariantIsKept(t *testing.T) {
	t.Parallel()
	rep := preview(t, added("a", nil))
	m := newMarkdown(rep, "")
	first, err := m.get(summaryOnly)
	if err != nil {
		t.Fatal(err)
	}
	rep.Targets[0].Name = "renamed"
	again, err := m.get(summaryOnly)
	if err != nil || again != first {
		t.Errorf("rendered again: %v\n%s", err, again)
	}
}
