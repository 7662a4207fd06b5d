package write

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

// section is one category's place in the text and markdown reports.
type section struct {
	category string
	title    string
	mark     string
}

var sections = []section{
	{report.Add, "To add", "+"},
	{report.Modify, "To modify", "~"},
	{report.Delete, "To delete", "-"},
	{report.Unchanged, "Unchanged", "="},
	{report.Error, "Errors", "x"},
}

// sectionOf returns the section of a category.
func sectionOf(category string) section {
	if i := sectionIndex(category); i < len(sections) {
		return sections[i]
	}
	return sections[0]
}

// sectionIndex is the place of a category's section (len(sections) for none).
func sectionIndex(category string) int {
	if i := slices.IndexFunc(sections, func(s section) bool { return s.category == category }); i >= 0 {
		return i
	}
	return len(sections)
}

// objectsIn are the target's objects of a category.
func objectsIn(t report.Target, category string) []report.Object {
	var out []report.Object
	for _, o := range t.Objects {
		if o.Category == category {
			out = append(out, o)
		}
	}
	return out
}

// splitSkipped separates the targets that were diffed from those that were skipped.
func splitSkipped(r *report.Report) (diffed, skipped []report.Target) {
	for _, t := range r.Targets {
		if t.Skipped != "" {
			skipped = append(skipped, t)
		} else {
			diffed = append(diffed, t)
		}
	}
	return diffed, skipped
}

// skippedTitle heads the list of skipped targets.
func skippedTitle(n int) string {
	if n == 1 {
		return "Skipped 1 target"
	}
	return fmt.Sprintf("Skipped %d targets", n)
}

// about says what a target renders and where it is diffed: "kustomize apps/web,
// context prod".
func about(t report.Target, quote func(string) string) string {
	var parts []string
	if t.Path != "" {
		parts = append(parts, cmp.Or(t.Renderer, "path")+" "+quote(t.Path))
	}
	if t.Context != "" {
		parts = append(parts, "context "+quote(t.Context))
	}
	if t.Applier != "" {
		parts = append(parts, "applier "+quote(t.Applier))
	}
	return strings.Join(parts, ", ")
}

// verbatim quotes nothing: for the text and HTML reports, whose writers keep a string
// in its place themselves (a terminal's line, html/template's escaping).
func verbatim(s string) string { return s }

// headline is the report's title: the counts, or for a drift check what they mean.
func headline(r *report.Report) string {
	if r.Kind != report.KindDrift {
		return r.Summary.Headline()
	}
	if r.Summary.Changes() == 0 && r.Summary.Error == 0 {
		return "no drift: the cluster matches the repository"
	}
	return "drift detected: " + r.Summary.Headline()
}

// errorReason is an error's reason as reports name it: "error" when it has none.
func errorReason(o report.Object) string {
	return string(cmp.Or(o.ErrorReason, reason.Error))
}

// coverageGroup is the files of one coverage status, under a title.
type coverageGroup struct {
	Title string
	Files []report.CoveredFile
}

// coverageGroups are the change's files by status, those that make the report
// incomplete first (none without coverage).
func coverageGroups(c *report.Coverage) []coverageGroup {
	var out []coverageGroup
	for _, s := range []struct{ status, title string }{
		{report.CoverageReadByNothing, "Read by nothing"},
		{report.CoverageNotPreviewed, "Not previewed"},
		{report.CoveragePreviewed, "Previewed"},
		{report.CoverageNotDeployed, "Deploying nothing"},
	} {
		if files := c.Of(s.status); len(files) > 0 {
			out = append(out, coverageGroup{Title: s.title, Files: files})
		}
	}
	return out
}

// coverageWhy is what the report says of a file after its name: the targets that
// previewed it, or why it was not previewed or deploys nothing.
func coverageWhy(f report.CoveredFile) string {
	if f.Status == report.CoveragePreviewed {
		var names []string
		for _, t := range f.Targets {
			if t.Previewed {
				names = append(names, report.DisplayName(t.Name))
			}
		}
		return "by " + strings.Join(names, ", ")
	}
	return f.Why
}
