package write

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html"
	"io"
	"os"
	"sort"
	"strings"
	"text/template"

	"github.com/drift-gitops/drift/internal/report"
)

// MarkdownOptions control the markdown report.
type MarkdownOptions struct {
	// ShowUnchanged lists unchanged objects by name; otherwise they are only counted.
	ShowUnchanged bool
	// MaxBytes, when set, is a size budget (a pull request comment): the summary,
	// errors and risks always go in; diffs are added risky ones first, then the
	// smallest, while they fit; the others are named with a pointer to FullReport.
	MaxBytes int
	// SummaryOnly writes the title, the errors, the risks and the table, no objects.
	SummaryOnly bool
	// FullReport says where the whole report is, for what a budget leaves out: a
	// markdown link to the job summary, or plain words ("" is "the job summary").
	FullReport string
	// AfterComment, with MaxBytes, writes only the details blocks that a report with
	// this budget (the pull request comment's) leaves out, within MaxBytes: the check
	// run's output, its own budget.
	AfterComment int
	// HTMLReport, when set, says where the HTML report is (markdown: a link).
	HTMLReport string
	// Template, when set, is a user's template file (--markdown-template), parsed
	// over the built-in one: it may redefine "report", "object" and "line".
	Template string
}

//go:embed templates/report.md.tmpl
var markdownTemplate string

// budgetReserve is kept free for the closing lines of a size-limited report.
const budgetReserve = 1024

// markdownFuncs are what templates may call; every one that takes content escapes it.
var markdownFuncs = template.FuncMap{
	"code":     codeSpan,
	"cell":     cellCode,
	"html":     htmlText,
	"htmlcode": htmlCode,
	"fence":    fence,
	"plural":   report.Plural,
	"mark":     mark,
}

// mark is a category's sign in the markdown report.
func mark(category string) string {
	switch category {
	case report.Add:
		return "➕"
	case report.Modify:
		return "✏️"
	case report.Delete:
		return "🗑️"
	case report.Error:
		return "❌"
	}
	return "▫️"
}

// parseMarkdownTemplate parses the built-in template, and the user's over it.
func parseMarkdownTemplate(file string) (*template.Template, error) {
	t, err := template.New("report.md.tmpl").Funcs(markdownFuncs).Parse(markdownTemplate)
	if err != nil {
		return nil, err
	}
	if file == "" {
		return t, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--markdown-template: %w", err)
	}
	if t, err = t.New(file).Parse(string(data)); err != nil {
		return nil, fmt.Errorf("--markdown-template: %w", err)
	}
	return t, nil
}

// mdEntry is one object as the markdown templates see it.
type mdEntry struct {
	report.Object
	// Anchor is the id of the object's details block; Detailed says whether the
	// block is in this report (a budget may leave it out).
	Anchor     string
	Detailed   bool
	Target     string
	FullReport string
	// Notes are the errors and warnings, a line each; Hint what to do about the error.
	Notes string
	Hint  string
	// Reason and Message are an error's reason and first line, for the errors list.
	Reason, Message string
	// Line is the rendered summary line.
	Line string

	block string // the rendered details block
}

// mdRisk is one risk of one object, for the risks list.
type mdRisk struct {
	*mdEntry
	Rule, Message string
}

// mdTarget is one diffed target.
type mdTarget struct {
	report.Target
	Display, About string
	Counts         report.Summary
	Lines          []*mdEntry
	More           int
	Details        []string
	Drift          []string
	Unchanged      []report.Object

	entries, drift []*mdEntry // every object with a block; Lines may be fewer
}

// mdView is what the "report" template lays out.
type mdView struct {
	Headline, Incomplete, Policy, Mismatch string
	Describe, Config                       string
	Errors                                 []*mdEntry
	Risks                                  []mdRisk
	Targets                                []*mdTarget
	Skipped                                []report.Target
	Multi, SummaryOnly                     bool
	FullReport, HTMLReport                 string
	LeftOut                                int
	// Coverage is the coverage of the change (nil without a base).
	Coverage *mdCoverage
}

// mdCoverage is the coverage of the change as the markdown report lists it: its
// line, and the files by status, each group cut at maxCoverageLines.
type mdCoverage struct {
	Line   string
	Open   bool
	Groups []mdCoverageGroup
}

type mdCoverageGroup struct {
	Title string
	Count int
	Lines []string
	More  int
}

// maxCoverageLines is the most files of one status the markdown report lists:
// more of those read by nothing or not previewed, fewer of the others.
const maxCoverageLines, maxCoverageOthers = 50, 20

// cappedBelow is the budget under which the coverage's lists are cut (a comment's,
// a check run's); the job summary's MiB holds them whole.
const cappedBelow = 256 << 10

// markdownCoverage is the coverage of the change for the markdown report: every
// name in a code span, and every reason that quotes a name. A small budget (a
// comment's, capped) lists at most maxCoverageLines or maxCoverageOthers files of
// a status; the job summary and a larger one list them all.
func markdownCoverage(c *report.Coverage, capped bool) *mdCoverage {
	if c == nil {
		return nil
	}
	mc := &mdCoverage{Line: c.Line(), Open: c.Count(report.CoverageReadByNothing) > 0}
	for _, g := range coverageGroups(c) {
		mg := mdCoverageGroup{Title: g.Title, Count: len(g.Files)}
		most := maxCoverageOthers
		if g.Title == "Read by nothing" || g.Title == "Not previewed" {
			most = maxCoverageLines
		}
		if !capped {
			most = len(g.Files)
		}
		for i, f := range g.Files {
			if i == most {
				mg.More = len(g.Files) - i
				break
			}
			why := codeSpan(f.Why)
			switch f.Status {
			case report.CoveragePreviewed:
				var names []string
				for _, t := range f.Targets {
					if t.Previewed {
						names = append(names, codeSpan(report.DisplayName(t.Name)))
					}
				}
				why = "by " + strings.Join(names, ", ")
			}
			mark := ""
			if f.Incomplete {
				mark = "⚠️ "
			}
			mg.Lines = append(mg.Lines, "- "+mark+f.Name(codeSpan)+": "+why)
		}
		mc.Groups = append(mc.Groups, mg)
	}
	return mc
}

// Markdown writes the report as GitHub-flavoured markdown from the templates in
// templates/report.md.tmpl: the title with the counts, the errors and the risks, a
// table of targets, one line per changed object, then one collapsed block per object
// with its diff, risky objects first. Under a budget (MaxBytes) the lines and risks
// always go in and diffs are added, risky then small first, while they fit.
func Markdown(w io.Writer, rep *report.Report, opts MarkdownOptions) error {
	t, err := parseMarkdownTemplate(opts.Template)
	if err != nil {
		return err
	}
	v, entries, err := markdownView(t, rep, opts)
	if err != nil {
		return err
	}
	if opts.AfterComment > 0 {
		return writeLeftOut(w, t, v, entries, opts)
	}
	if opts.MaxBytes > 0 && !opts.SummaryOnly {
		if err := fitBudget(t, v, entries, opts.MaxBytes); err != nil {
			return err
		}
	}
	return execute(w, t, "report", v)
}

// execute runs the named template.
func execute(w io.Writer, t *template.Template, name string, data any) error {
	if err := t.ExecuteTemplate(w, name, data); err != nil {
		return fmt.Errorf("markdown template: %w", err)
	}
	return nil
}

// renderTemplate is what the named template writes.
func renderTemplate(t *template.Template, name string, data any) (string, error) {
	var b bytes.Buffer
	err := execute(&b, t, name, data)
	return b.String(), err
}

// markdownView builds the view with every detail in; entries are every object that
// has a details block, in the report's order.
func markdownView(t *template.Template, rep *report.Report, opts MarkdownOptions) (*mdView, []*mdEntry, error) {
	full := cmp.Or(opts.FullReport, "the job summary")
	v := &mdView{Headline: headline(rep), Mismatch: rep.MismatchNote(), Policy: rep.PolicyNote(),
		SummaryOnly: opts.SummaryOnly, FullReport: full, HTMLReport: opts.HTMLReport}
	if risky := rep.Summary.Risky; risky > 0 && rep.Kind != report.KindDrift {
		v.Headline += " · ⚠️ " + report.Plural(risky, "risky object", "risky objects")
	}
	if !rep.Complete {
		v.Incomplete = rep.IncompleteNote(codeSpan)
	}
	if rep.Kind == report.KindDrift {
		v.Describe = "Drift check of " + mdDescribe(rep) + " against the live cluster."
	} else {
		v.Describe = "Preview of " + mdDescribe(rep) + "."
	}
	var cfg bytes.Buffer
	writeConfigMarkdown(&cfg, rep.Config)
	v.Config = cfg.String()
	diffed, skipped := splitSkipped(rep)
	v.Skipped, v.Multi = skipped, len(diffed) > 1
	v.Coverage = markdownCoverage(rep.Coverage, opts.MaxBytes > 0 && opts.MaxBytes < cappedBelow)
	var entries []*mdEntry
	n := 0
	newEntry := func(t report.Target, o report.Object) *mdEntry {
		e := &mdEntry{Object: o, Detailed: true, Target: t.Display(), FullReport: full}
		var notes []string
		if o.Error != "" {
			why := errorReason(o)
			notes = append(notes, "error ("+why+"): "+o.Error)
			e.Reason, e.Message, e.Hint = why, report.FirstLine(o.Error, 200), o.ErrorReason.Hint()
		}
		for _, wn := range o.Warnings {
			notes = append(notes, "warning ("+string(wn.Reason)+"): "+wn.Message)
		}
		e.Notes = strings.Join(notes, "\n")
		return e
	}
	for _, tg := range diffed {
		mt := &mdTarget{Target: tg, Display: tg.Display(), About: about(tg, codeSpan)}
		for _, o := range tg.Objects {
			mt.Counts.Count(o.Category)
			if o.Category == report.Unchanged {
				if opts.ShowUnchanged {
					mt.Unchanged = append(mt.Unchanged, o)
				}
				continue
			}
			e := newEntry(tg, o)
			mt.Lines = append(mt.Lines, e)
			if o.Category == report.Error {
				v.Errors = append(v.Errors, e)
			}
			for _, r := range o.Risks {
				v.Risks = append(v.Risks, mdRisk{mdEntry: e, Rule: r.Rule, Message: r.Message})
			}
		}
		sortDetails(mt.Lines)
		for _, e := range mt.Lines {
			n++
			e.Anchor = fmt.Sprintf("drift-%d", n)
		}
		mt.entries = append([]*mdEntry(nil), mt.Lines...)
		entries = append(entries, mt.Lines...)
		for _, o := range tg.Drift {
			n++
			e := newEntry(tg, o)
			e.Anchor = fmt.Sprintf("drift-%d", n)
			mt.drift = append(mt.drift, e)
		}
		v.Targets = append(v.Targets, mt)
	}
	for _, mt := range v.Targets {
		entries = append(entries, mt.drift...)
	}
	for _, e := range entries {
		var err error
		if e.block, err = renderTemplate(t, "object", e); err != nil {
			return nil, nil, err
		}
	}
	return v, entries, fill(t, v)
}

// sortDetails orders a target's objects for reading: errors, then risky objects, then
// by category (add, modify, delete), each in the report's order.
func sortDetails(es []*mdEntry) {
	rank := func(e *mdEntry) int {
		switch {
		case e.Category == report.Error:
			return 0
		case len(e.Risks) > 0:
			return 1
		}
		return 2 + sectionIndex(e.Category)
	}
	sort.SliceStable(es, func(i, j int) bool { return rank(es[i]) < rank(es[j]) })
}

// fill renders each target's lines and details as the entries now say.
func fill(t *template.Template, v *mdView) error {
	for _, mt := range v.Targets {
		mt.Details, mt.Drift = mt.Details[:0], mt.Drift[:0]
		for _, e := range mt.drift {
			if e.Detailed && !v.SummaryOnly {
				mt.Drift = append(mt.Drift, e.block)
			}
		}
		for _, e := range mt.entries {
			var err error
			if e.Line, err = renderTemplate(t, "line", e); err != nil {
				return err
			}
			if e.Detailed && !v.SummaryOnly {
				mt.Details = append(mt.Details, e.block)
			}
		}
	}
	return nil
}

// fitBudget decides what of the report a budget holds. The title, errors, risks and
// table always; one line per changed object while the lines take at most half the
// budget (never an error's or a risky object's); then the details blocks, errors
// first, then risky objects, then the smallest, while they fit.
func fitBudget(t *template.Template, v *mdView, entries []*mdEntry, max int) error {
	for _, e := range entries {
		e.Detailed = false
	}
	if err := fill(t, v); err != nil {
		return err
	}
	head, err := renderTemplate(t, "report", v)
	if err != nil {
		return err
	}
	if len(head)+budgetReserve > max/2 {
		trimLines(v, len(head)+budgetReserve-max/2)
		if head, err = renderTemplate(t, "report", v); err != nil {
			return err
		}
	}
	order := priority(entries)
	used := len(head) + budgetReserve
	for _, e := range order {
		if used+len(e.block)+len(" · [details](#)")+len(e.Anchor) > max {
			continue
		}
		e.Detailed = true
		used += len(e.block) + len(" · [details](#)") + len(e.Anchor)
	}
	for _, e := range entries {
		if !e.Detailed {
			v.LeftOut++
		}
	}
	return fill(t, v)
}

// writeLeftOut writes the details blocks a comment of opts.AfterComment bytes leaves
// out, in the comment's order of priority, while they fit opts.MaxBytes.
func writeLeftOut(w io.Writer, t *template.Template, v *mdView, entries []*mdEntry, opts MarkdownOptions) error {
	if err := fitBudget(t, v, entries, opts.AfterComment); err != nil {
		return err
	}
	var rest []*mdEntry
	for _, e := range entries {
		if !e.Detailed {
			rest = append(rest, e)
		}
		e.Detailed = false
	}
	v.LeftOut = 0
	used := budgetReserve
	for _, e := range priority(rest) {
		if opts.MaxBytes > 0 && used+len(e.block) > opts.MaxBytes {
			v.LeftOut++
			continue
		}
		e.Detailed = true
		used += len(e.block)
	}
	if err := fill(t, v); err != nil {
		return err
	}
	return execute(w, t, "details", v)
}

// priority orders entries as a budget takes them: the change before drift, errors,
// then risky objects, then the smallest blocks.
func priority(entries []*mdEntry) []*mdEntry {
	order := append([]*mdEntry(nil), entries...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if (a.Story == report.StoryDrift) != (b.Story == report.StoryDrift) {
			return b.Story == report.StoryDrift
		}
		if (a.Category == report.Error) != (b.Category == report.Error) {
			return a.Category == report.Error
		}
		if (len(a.Risks) > 0) != (len(b.Risks) > 0) {
			return len(a.Risks) > 0
		}
		return len(a.block) < len(b.block)
	})
	return order
}

// trimLines drops summary lines from the end of the targets, never an error's or a
// risky object's, until over bytes are dropped.
func trimLines(v *mdView, over int) {
	for i := len(v.Targets) - 1; i >= 0 && over > 0; i-- {
		mt := v.Targets[i]
		drop := map[*mdEntry]bool{}
		for j := len(mt.Lines) - 1; j >= 0 && over > 0; j-- {
			if e := mt.Lines[j]; e.Category != report.Error && len(e.Risks) == 0 {
				drop[e] = true
				over -= len(e.Line)
			}
		}
		keep := mt.Lines[:0]
		for _, e := range mt.Lines {
			if !drop[e] {
				keep = append(keep, e)
			}
		}
		mt.Lines, mt.More = keep, mt.More+len(drop)
	}
}

// mdDescribe names what was previewed, with refs in code spans.
func mdDescribe(rep *report.Report) string {
	what := report.DescribeRef(rep.Ref, rep.Commit, codeSpan)
	if rep.Cluster != report.ClusterEphemeral {
		return what
	}
	if rep.Base == "" {
		return what + " on an ephemeral API server that started empty, not a live cluster"
	}
	return what + " compared with " + report.DescribeRef(rep.Base, rep.BaseCommit, codeSpan) + " on an ephemeral API server, not a live cluster"
}

// fence is body in a fenced block no backtick run inside it can close.
func fence(lang, body string) string {
	var b bytes.Buffer
	writeFence(&b, lang, body)
	return b.String()
}

// writeFence writes body in a fenced block (fence).
func writeFence(w io.Writer, lang, body string) {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	fmt.Fprintf(w, "\n%s%s\n%s\n%s\n", fence, lang, strings.TrimRight(body, "\n"), fence)
}

// lineBreaks are what CommonMark ends a line at (LF, CR, CRLF) and what other readers
// of the text may (VT, FF, NEL, LS, PS), each replaced by a space.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ", "\v", " ", "\f", " ", "\u0085", " ", "\u2028", " ", "\u2029", " ")

// oneLine is s on one line. A code span, and an HTML block such as drift's
// <details><summary> line, holds only what stays on its lines: after a line break a
// line may start a block of its own (an HTML block such as </details>, a heading, a
// list), and a blank line ends both.
func oneLine(s string) string {
	return lineBreaks.Replace(s)
}

// codeSpan wraps s in a code span that nothing inside it can close: no backtick run
// (the span's are longer), no line break (s is put on one line). Outside a table cell.
func codeSpan(s string) string {
	s = oneLine(s)
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// CodeSpan is s in a markdown code span that nothing in s can close (codeSpan), for
// text publishing puts in the markdown around the report.
func CodeSpan(s string) string {
	return codeSpan(s)
}

// cellCode is codeSpan for a table cell: GFM splits a row at every '|' that is not
// escaped, inside a code span too, and reads "\\|" in a cell as '|' in the code.
func cellCode(s string) string {
	return strings.ReplaceAll(codeSpan(s), "|", `\|`)
}

// htmlText is s for inside an HTML tag of the markdown: escaped (no tag, no entity of
// its own), on one line (so the HTML block it is in does not end).
func htmlText(s string) string {
	return html.EscapeString(oneLine(s))
}

// htmlCode is htmlText in <code>, where GitHub links no mention (@user, @org/team),
// no issue (#123, GH-1, org/repo#1) and no URL: for text in drift's <summary> lines,
// which are HTML, not markdown, so a code span would not be one there.
func htmlCode(s string) string {
	return "<code>" + htmlText(s) + "</code>"
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}
