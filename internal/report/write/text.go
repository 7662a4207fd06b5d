package write

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/unified"
)

// TextOptions control the text report.
type TextOptions struct {
	// Color adds ANSI colours (for a terminal).
	Color bool
	// ShowUnchanged lists unchanged objects by name; otherwise they are only counted.
	ShowUnchanged bool
	// NoDiffs leaves the diffs out, when an external program shows them.
	NoDiffs bool
	// AfterObjects, when set, is called after the object sections and before the summary
	// (the external diff program's output goes there).
	AfterObjects func(w io.Writer) error
}

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiYell  = "\x1b[33m"
	ansiCyan  = "\x1b[36m"
)

// Text writes the report for a terminal or a log.
func Text(w io.Writer, rep *report.Report, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	c := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return code + s + ansiReset
	}
	fmt.Fprintf(bw, "%s %s\n", c(ansiBold, "drift:"), rep.Describe())
	if !rep.Complete {
		// Before anything else, as at the end: the report is not the whole story.
		fmt.Fprintf(bw, "%s\n", c(ansiRed, rep.IncompleteNote(verbatim)))
	}
	writeConfigText(bw, rep.Config, func(s string) string { return c(ansiBold, s) })
	writeTextFirst(bw, rep, c)
	diffed, skipped := splitSkipped(rep)
	if len(skipped) > 0 {
		fmt.Fprintf(bw, "\n%s\n", c(ansiBold, skippedTitle(len(skipped))+":"))
		for _, t := range skipped {
			if t.NotPreviewed {
				fmt.Fprintf(bw, "  %s: %s\n", t.Name, c(ansiRed, "changed, not previewed: "+t.Skipped))
				continue
			}
			fmt.Fprintf(bw, "  %s: %s\n", t.Name, t.Skipped)
		}
	}
	for _, t := range diffed {
		about := about(t, verbatim)
		if about != "" {
			about = "; " + about
		}
		fmt.Fprintf(bw, "\n%s %s (%s%s)\n", c(ansiBold, "Target"), t.Display(), report.Plural(len(t.Objects), "object", "objects"), about)
		for _, s := range sections {
			objs := objectsIn(t, s.category)
			if len(objs) == 0 {
				continue
			}
			fmt.Fprintf(bw, "\n%s\n", c(ansiBold, fmt.Sprintf("%s (%d):", s.title, len(objs))))
			if s.category == report.Unchanged && !opts.ShowUnchanged {
				fmt.Fprintf(bw, "  %d unchanged (--show-unchanged lists them)\n", len(objs))
				continue
			}
			for i, o := range objs {
				if i > 0 && o.Diff != "" && !opts.NoDiffs {
					fmt.Fprintln(bw)
				}
				writeTextObject(bw, o, s, opts, c)
			}
		}
		if len(t.Drift) > 0 {
			fmt.Fprintf(bw, "\n%s\n", c(ansiBold, fmt.Sprintf("Drift already in the cluster, not made by this change (%d):", len(t.Drift))))
			for i, o := range t.Drift {
				if i > 0 && o.Diff != "" && !opts.NoDiffs {
					fmt.Fprintln(bw)
				}
				writeTextObject(bw, o, sectionOf(o.Category), opts, c)
			}
		}
		if len(t.Kept) > 0 {
			fmt.Fprintf(bw, "\n%s\n", c(ansiBold, fmt.Sprintf("Kept, not deleted (%d):", len(t.Kept))))
			for _, k := range t.Kept {
				fmt.Fprintf(bw, "  %s (listed by %s): %s\n", k.Title(), k.Inventory, k.Reason)
			}
		}
		for _, n := range t.Notes {
			fmt.Fprintf(bw, "\n%s %s\n", c(ansiBold, "Note:"), n)
		}
	}
	if opts.AfterObjects != nil {
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := opts.AfterObjects(w); err != nil {
			return err
		}
	}
	if rep.Coverage != nil {
		fmt.Fprintln(bw)
		writeCoverageText(bw, rep.Coverage, c)
	}
	fmt.Fprintf(bw, "\n%s %s.\n", c(ansiBold, "Summary:"), rep.Summary.Line())
	if note := rep.PolicyNote(); note != "" {
		fmt.Fprintf(bw, "%s\n", c(ansiRed, note))
	}
	if note := rep.MismatchNote(); note != "" {
		fmt.Fprintf(bw, "%s\n", c(ansiYell, note))
	}
	if !rep.Complete {
		fmt.Fprintf(bw, "%s\n", c(ansiRed, rep.IncompleteNote(verbatim)))
	}
	return bw.Flush()
}

// writeTextObject writes one object of a section: its line, owner, error, warnings,
// risks and diff.
func writeTextObject(w io.Writer, o report.Object, s section, opts TextOptions, c func(string, string) string) {
	color := map[string]string{report.Add: ansiGreen, report.Modify: ansiYell, report.Delete: ansiRed, report.Error: ansiRed, report.Unchanged: ""}[s.category]
	head := fmt.Sprintf("%s %s", s.mark, o.Title())
	if color != "" {
		head = c(color, head)
	}
	what := ""
	if o.What != "" {
		what = ": " + o.What
	}
	fmt.Fprintf(w, "%s%s  (%s)\n", head, what, o.Where())
	if o.Inventory != "" {
		fmt.Fprintf(w, "  owned by %s\n", o.Inventory)
	}
	if o.Error != "" {
		why := errorReason(o)
		fmt.Fprintf(w, "  %s %s\n", c(ansiRed, why+":"), indentRest(o.Error, "    "))
		if h := o.ErrorReason.Hint(); h != "" {
			fmt.Fprintf(w, "  %s %s\n", c(ansiBold, "what to do:"), h)
		}
	}
	for _, wn := range o.Warnings {
		fmt.Fprintf(w, "  %s %s\n", c(ansiYell, "warning ("+string(wn.Reason)+"):"), indentRest(wn.Message, "    "))
	}
	for _, r := range o.Risks {
		fmt.Fprintf(w, "  %s %s\n", c(ansiRed, "risk ("+r.Rule+"):"), r.Message)
	}
	if o.Diff == "" || opts.NoDiffs {
		return
	}
	for _, line := range unified.Lines(o.Diff) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = c(ansiBold, line)
		case strings.HasPrefix(line, "@@"):
			line = c(ansiCyan, line)
		case strings.HasPrefix(line, "+"):
			line = c(ansiGreen, line)
		case strings.HasPrefix(line, "-"):
			line = c(ansiRed, line)
		}
		fmt.Fprintln(w, line)
	}
}

// indentRest indents every line of s but the first, without its trailing newlines.
func indentRest(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

// writeTextFirst lists, before the targets, what must not be missed: every error and
// every risk, one line each, with its target when there are several.
func writeTextFirst(w io.Writer, rep *report.Report, c func(string, string) string) {
	diffed, _ := splitSkipped(rep)
	in := func(t report.Target) string {
		if len(diffed) > 1 {
			return " in " + t.Display()
		}
		return ""
	}
	var errs, risks []string
	for _, t := range diffed {
		for _, o := range t.Objects {
			if o.Category == report.Error {
				why := errorReason(o)
				errs = append(errs, fmt.Sprintf("  x %s (%s)%s: %s", o.Title(), o.Where(), in(t), why))
			}
			for _, r := range o.Risks {
				risks = append(risks, fmt.Sprintf("  ! %s%s: %s: %s", o.Title(), in(t), r.Rule, r.Message))
			}
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "\n%s\n%s\n", c(ansiRed, fmt.Sprintf("Errors (%d), below in full:", len(errs))), strings.Join(errs, "\n"))
	}
	if len(risks) > 0 {
		fmt.Fprintf(w, "\n%s\n%s\n", c(ansiYell, fmt.Sprintf("Risks (%d):", len(risks))), strings.Join(risks, "\n"))
	}
}

// CoverageText writes the coverage of a change as the text report does (drift
// targets --base).
func CoverageText(w io.Writer, cov *report.Coverage) {
	writeCoverageText(w, cov, func(_, s string) string { return s })
}

// writeCoverageText writes the coverage of the change: its line, then each file
// by status, those that make the report incomplete first.
func writeCoverageText(w io.Writer, cov *report.Coverage, c func(string, string) string) {
	fmt.Fprintf(w, "%s %s\n", c(ansiBold, "Coverage of the change:"), cov.Line())
	for _, g := range coverageGroups(cov) {
		fmt.Fprintf(w, "  %s (%d):\n", g.Title, len(g.Files))
		for _, f := range g.Files {
			line := fmt.Sprintf("    %s: %s", f.Name(verbatim), report.Shown(coverageWhy(f)))
			if f.Incomplete {
				line = c(ansiRed, line)
			}
			fmt.Fprintln(w, line)
		}
	}
}
