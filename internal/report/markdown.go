package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// MarkdownOptions control the markdown report.
type MarkdownOptions struct {
	// ShowUnchanged lists unchanged objects by name; otherwise they are only counted.
	ShowUnchanged bool
	// MaxBytes, when set, is a size budget (a pull request comment): the summary and
	// errors always go in, diffs are added whole while they fit, and objects whose diff
	// does not fit are listed by name with a note that the full report is elsewhere.
	MaxBytes int
	// SummaryOnly writes the title, the table and the counts of errors, nothing else.
	SummaryOnly bool
}

// budgetReserve is kept free for the closing lines of a size-limited report.
const budgetReserve = 4096

// WriteMarkdown writes the report as GitHub-flavoured markdown: a title with the counts,
// a table per target, errors first, then one collapsed section per category with a
// diff block per object. Text from manifests and servers only appears inside code
// spans and fences longer than any backtick run they contain, so it cannot break out,
// mention a user or link an issue.
func WriteMarkdown(w io.Writer, rep *Report, opts MarkdownOptions) error {
	bw := &bytes.Buffer{}
	fmt.Fprintf(bw, "### drift: %s\n\n", rep.headline())
	if !rep.Complete {
		fmt.Fprintf(bw, "> [!CAUTION]\n> %s\n\n", rep.IncompleteNote())
	}
	if note := rep.MismatchNote(); note != "" {
		fmt.Fprintf(bw, "> [!WARNING]\n> %s\n\n", note)
	}
	if rep.Kind == KindDrift {
		fmt.Fprintf(bw, "Drift check of %s against the live cluster.\n\n", mdDescribe(rep))
	} else {
		fmt.Fprintf(bw, "Preview of %s.\n\n", mdDescribe(rep))
	}
	writeConfigMarkdown(bw, rep.Config)
	fmt.Fprintf(bw, "| Target | Add | Modify | Delete | Unchanged | Errors |\n|---|---:|---:|---:|---:|---:|\n")
	diffed, skipped := rep.splitSkipped()
	for _, t := range diffed {
		var s Summary
		for _, o := range t.Objects {
			s.count(o.Category)
		}
		fmt.Fprintf(bw, "| %s | %d | %d | %d | %d | %d |\n", codeSpan(t.Name), s.Add, s.Modify, s.Delete, s.Unchanged, s.Error)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(bw, "\n<details><summary>%s</summary>\n\n", skippedTitle(len(skipped)))
		for _, t := range skipped {
			fmt.Fprintf(bw, "- %s: %s\n", codeSpan(t.Name), codeSpan(t.Skipped))
		}
		fmt.Fprintf(bw, "\n</details>\n")
	}
	if opts.SummaryOnly {
		fmt.Fprintf(bw, "\nThe report is too long for a comment: the full report is in the job summary and the JSON report.\n")
		_, err := w.Write(bw.Bytes())
		return err
	}
	b := &budget{max: opts.MaxBytes}
	if b.max > 0 {
		for _, t := range diffed {
			for _, o := range append(objectsIn(t, Add), append(append(objectsIn(t, Modify), objectsIn(t, Delete)...), t.Drift...)...) {
				b.pending += len(leftOutLine(o))
			}
		}
	}
	for _, t := range diffed {
		multi := len(diffed) > 1
		if multi {
			fmt.Fprintf(bw, "\n#### Target %s\n", codeSpan(t.Name))
			if about := t.about(codeSpan); about != "" {
				fmt.Fprintf(bw, "\n%s\n", about)
			}
		}
		if errs := objectsIn(t, Error); len(errs) > 0 {
			fmt.Fprintf(bw, "\n**Errors (%d)**\n\n", len(errs))
			for _, o := range errs {
				writeMarkdownObject(bw, o)
			}
		}
		for _, s := range sections {
			objs := objectsIn(t, s.category)
			if s.category == Error || len(objs) == 0 {
				continue
			}
			fmt.Fprintf(bw, "\n<details><summary>%s (%d)</summary>\n\n", s.title, len(objs))
			if s.category == Unchanged {
				if opts.ShowUnchanged {
					for _, o := range objs {
						fmt.Fprintf(bw, "- %s from %s\n", codeSpan(o.Title()), codeSpan(o.Where()))
					}
				} else {
					fmt.Fprintf(bw, "%d unchanged.\n", len(objs))
				}
			} else {
				for _, o := range objs {
					b.write(bw, o)
				}
			}
			fmt.Fprintf(bw, "\n</details>\n")
		}
		if len(t.Drift) > 0 {
			fmt.Fprintf(bw, "\n<details><summary>Drift already in the cluster, not made by this change (%d)</summary>\n\n", len(t.Drift))
			for _, o := range t.Drift {
				b.write(bw, o)
			}
			fmt.Fprintf(bw, "\n</details>\n")
		}
		if len(t.Kept) > 0 {
			fmt.Fprintf(bw, "\n<details><summary>Kept, not deleted (%d)</summary>\n\n", len(t.Kept))
			for _, k := range t.Kept {
				fmt.Fprintf(bw, "- %s (listed by %s): %s\n", codeSpan(k.Title()), codeSpan(k.Inventory), codeSpan(k.Reason))
			}
			fmt.Fprintf(bw, "\n</details>\n")
		}
		for _, n := range t.Notes {
			fmt.Fprintf(bw, "\nNote: %s\n", codeSpan(n))
		}
	}
	if b.leftOut > 0 {
		listed := "they are listed by name above"
		if b.unlisted > 0 {
			listed = fmt.Sprintf("%d of them listed by name above; %d more could not even be named (see the job summary)", b.leftOut-b.unlisted, b.unlisted)
		}
		fmt.Fprintf(bw, "\n> [!NOTE]\n> %d diffs did not fit in this comment (GitHub's size limit); %s. The full report is in the job summary and the JSON report.\n", b.leftOut, listed)
	}
	_, err := w.Write(bw.Bytes())
	return err
}

func mdDescribe(rep *Report) string {
	what := describeRef(rep.Ref, rep.Commit, codeSpan)
	if rep.Cluster != ClusterEphemeral {
		return what
	}
	if rep.Base == "" {
		return what + " on an ephemeral API server that started empty, not a live cluster"
	}
	return what + " compared with " + describeRef(rep.Base, rep.BaseCommit, codeSpan) + " on an ephemeral API server, not a live cluster"
}

func writeMarkdownObject(w io.Writer, o Object) {
	if o.Inventory != "" {
		fmt.Fprintf(w, "%s, owned by %s\n", codeSpan(o.Title()), codeSpan(o.Inventory))
	} else {
		fmt.Fprintf(w, "%s from %s\n", codeSpan(o.Title()), codeSpan(o.Where()))
	}
	var notes []string
	if o.Error != "" {
		notes = append(notes, "error ("+string(o.ErrorReason)+"): "+o.Error)
	}
	for _, wn := range o.Warnings {
		notes = append(notes, "warning ("+string(wn.Reason)+"): "+wn.Message)
	}
	if len(notes) > 0 {
		writeFence(w, "text", strings.Join(notes, "\n"))
	}
	if h := o.ErrorReason.Hint(); o.Error != "" && h != "" {
		fmt.Fprintf(w, "What to do: %s.\n", h)
	}
	if o.Diff != "" {
		writeFence(w, "diff", o.Diff)
	}
	fmt.Fprintln(w)
}

func writeFence(w io.Writer, lang, body string) {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	fmt.Fprintf(w, "\n%s%s\n%s\n%s\n", fence, lang, strings.TrimRight(body, "\n"), fence)
}

// codeSpan wraps s in a code span that no backtick inside it can close.
func codeSpan(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
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

// budget adds objects to a size-limited report: whole while they fit, keeping room
// for one name line per object still to come, so that every object whose diff is left
// out is listed by name.
type budget struct {
	max, pending, leftOut, unlisted int
}

func (b *budget) write(bw *bytes.Buffer, o Object) {
	if b.max <= 0 {
		writeMarkdownObject(bw, o)
		return
	}
	var blk bytes.Buffer
	writeMarkdownObject(&blk, o)
	line := leftOutLine(o)
	b.pending -= len(line)
	if bw.Len()+blk.Len()+budgetReserve+b.pending <= b.max {
		bw.Write(blk.Bytes())
		return
	}
	b.leftOut++
	if bw.Len()+len(line)+budgetReserve <= b.max {
		bw.WriteString(line)
	} else {
		b.unlisted++
	}
}

// leftOutLine lists an object whose diff did not fit.
func leftOutLine(o Object) string {
	return fmt.Sprintf("- %s from %s: diff left out\n", codeSpan(o.Title()), codeSpan(o.Where()))
}
