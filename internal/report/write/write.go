package write

import (
	"context"
	"fmt"
	"io"

	"github.com/drift-gitops/drift/internal/report"
)

// Formats are the report formats Report knows, as -o names them.
var Formats = []string{"text", "markdown", "json", "changes"}

// Options say how Report writes a report. The caller reads the terminal and the
// environment; Report only acts on what they decided.
type Options struct {
	// Format is text (also when empty), markdown, json or changes.
	Format string
	// ShowUnchanged lists unchanged objects by name; otherwise they are only counted.
	ShowUnchanged bool
	// Color adds ANSI colours to a text report (for a terminal that did not set NO_COLOR).
	Color bool
	// ExternalDiff is the value of KUBECTL_EXTERNAL_DIFF: when set, a text report
	// leaves its diffs out and that program shows them after the objects.
	ExternalDiff string
	// Exec runs the external diff program; Run when nil.
	Exec Exec
	// Stderr receives the external diff program's own error output.
	Stderr io.Writer
	// MarkdownTemplate is a user's markdown template file (--markdown-template).
	MarkdownTemplate string
}

// Report writes rep to w in the format opts name.
func Report(ctx context.Context, w io.Writer, rep *report.Report, opts Options) error {
	switch opts.Format {
	case "json":
		return report.WriteJSON(w, rep)
	case "markdown":
		return Markdown(w, rep, MarkdownOptions{ShowUnchanged: opts.ShowUnchanged, Template: opts.MarkdownTemplate})
	case "changes":
		return Changes(w, rep, ChangesOptions{Color: opts.Color})
	}
	text := TextOptions{Color: opts.Color, ShowUnchanged: opts.ShowUnchanged}
	run := opts.Exec
	if run == nil {
		run = Run
	}
	if opts.ExternalDiff != "" {
		text.NoDiffs = true
		text.AfterObjects = func(w io.Writer) error {
			if rep.Summary.Changes() == 0 {
				return nil
			}
			fmt.Fprintf(w, "\nDiff from %s:\n", ExternalDiffEnv)
			return ExternalDiff(ctx, opts.ExternalDiff, run, rep, w, opts.Stderr)
		}
	}
	return Text(w, rep, text)
}
