package report

import (
	"context"
	"fmt"
	"io"
)

// Formats are the report formats Write knows, as -o names them.
var Formats = []string{"text", "markdown", "json", "changes"}

// WriteOptions say how Write writes a report. The caller reads the terminal and the
// environment; Write only acts on what they decided.
type WriteOptions struct {
	// Format is text (also when empty), markdown or json.
	Format string
	// ShowUnchanged lists unchanged objects by name; otherwise they are only counted.
	ShowUnchanged bool
	// Color adds ANSI colours to a text report (for a terminal that did not set NO_COLOR).
	Color bool
	// ExternalDiff is the value of KUBECTL_EXTERNAL_DIFF: when set, a text report
	// leaves its diffs out and that program shows them after the objects.
	ExternalDiff string
	// Stderr receives the external diff program's own error output.
	Stderr io.Writer
	// MarkdownTemplate is a user's markdown template file (--markdown-template).
	MarkdownTemplate string
}

// Write writes rep to w in the format opts name.
func Write(ctx context.Context, w io.Writer, rep *Report, opts WriteOptions) error {
	switch opts.Format {
	case "json":
		return WriteJSON(w, rep)
	case "markdown":
		return WriteMarkdown(w, rep, MarkdownOptions{ShowUnchanged: opts.ShowUnchanged, Template: opts.MarkdownTemplate})
	case "changes":
		return WriteChanges(w, rep, ChangesOptions{Color: opts.Color})
	}
	text := TextOptions{Color: opts.Color, ShowUnchanged: opts.ShowUnchanged}
	if opts.ExternalDiff != "" {
		text.NoDiffs = true
		text.AfterObjects = func(w io.Writer) error {
			if rep.Summary.Changes() == 0 {
				return nil
			}
			fmt.Fprintf(w, "\nDiff from %s:\n", ExternalDiffEnv)
			return RunExternalDiff(ctx, opts.ExternalDiff, rep, w, opts.Stderr)
		}
	}
	return WriteText(w, rep, text)
}
