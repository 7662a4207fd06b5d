package write

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/report"
)

// ChangesOptions control the field-level report (-o changes).
type ChangesOptions struct {
	// Color adds ANSI colours (for a terminal).
	Color bool
}

// Changes writes the report field by field, as dyff does: per target, each
// object that changes with the paths it changes and their values before and after;
// additions and deletions as one line, errors with their reason, risks under their
// object. Values are masked and scrubbed as in the diffs.
func Changes(w io.Writer, rep *report.Report, opts ChangesOptions) error {
	bw := bufio.NewWriter(w)
	c := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return code + s + ansiReset
	}
	fmt.Fprintf(bw, "%s %s\n", c(ansiBold, "drift:"), rep.Describe())
	diffed, _ := splitSkipped(rep)
	for _, t := range diffed {
		var changed []report.Object
		for _, o := range t.Objects {
			if o.Category != report.Unchanged {
				changed = append(changed, o)
			}
		}
		if len(changed) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n%s\n", c(ansiBold, t.Display()))
		for _, o := range changed {
			writeObjectChanges(bw, o, c)
		}
	}
	fmt.Fprintf(bw, "\n%s %s.\n", c(ansiBold, "Summary:"), rep.Summary.Line())
	if note := rep.PolicyNote(); note != "" {
		fmt.Fprintln(bw, c(ansiRed, note))
	}
	if !rep.Complete {
		fmt.Fprintln(bw, c(ansiRed, rep.IncompleteNote(verbatim)))
	}
	return bw.Flush()
}

// writeObjectChanges writes one changed object: its line, its field changes and risks.
func writeObjectChanges(w io.Writer, o report.Object, c func(string, string) string) {
	s := sectionOf(o.Category)
	color := map[string]string{report.Add: ansiGreen, report.Modify: ansiYell, report.Delete: ansiRed, report.Error: ansiRed}[o.Category]
	fmt.Fprintf(w, "%s  (%s)\n", c(color, s.mark+" "+o.Title()), o.Where())
	switch o.Category {
	case report.Add:
		fmt.Fprintf(w, "    %s\n", c(ansiGreen, "+ the whole object (new)"))
	case report.Delete:
		fmt.Fprintf(w, "    %s\n", c(ansiRed, "- the whole object (deleted)"))
	case report.Error:
		why := errorReason(o)
		fmt.Fprintf(w, "    %s %s\n", c(ansiRed, why+":"), indentRest(o.Error, "      "))
	}
	for _, ch := range o.Changes {
		fmt.Fprintf(w, "    %s\n", ch.Path)
		switch ch.Op {
		case report.OpAdd:
			fmt.Fprintf(w, "      %s\n", c(ansiGreen, "+ "+valueText(ch.After, "        ")))
		case report.OpRemove:
			fmt.Fprintf(w, "      %s\n", c(ansiRed, "- "+valueText(ch.Before, "        ")))
		default:
			fmt.Fprintf(w, "      %s\n", c(ansiRed, "- "+valueText(ch.Before, "        ")))
			fmt.Fprintf(w, "      %s\n", c(ansiGreen, "+ "+valueText(ch.After, "        ")))
		}
	}
	for _, r := range o.Risks {
		fmt.Fprintf(w, "    %s %s\n", c(ansiYell, "risk ("+r.Rule+"):"), r.Message)
	}
}

// valueText is a value on one line when it is a scalar, else as YAML indented under it.
func valueText(v any, indent string) string {
	switch v.(type) {
	case map[string]any, []any:
		y, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return "\n" + indent + strings.ReplaceAll(strings.TrimRight(string(y), "\n"), "\n", "\n"+indent)
	case nil:
		return "null"
	case string:
		s := v.(string)
		if strings.Contains(s, "\n") {
			return "|\n" + indent + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
		}
		return s
	}
	return fmt.Sprint(v)
}
