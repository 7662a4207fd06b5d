package write

import (
	"fmt"
	"io"

	"github.com/drift-gitops/drift/internal/report"
)

// writeConfigText writes the text report's paragraph on the configuration, if any.
func writeConfigText(w io.Writer, c *report.ConfigChange, bold func(string) string) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "\n%s %s\n", bold("Configuration:"), c.Lead(verbatim))
	for _, n := range c.NotApplied {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	if c.Diff != "" {
		fmt.Fprintf(w, "    %s\n", indentRest(c.Diff, "    "))
	}
}

// writeConfigMarkdown writes the markdown report's warning on the configuration, if any.
func writeConfigMarkdown(w io.Writer, c *report.ConfigChange) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "> [!WARNING]\n> %s\n", c.Lead(codeSpan))
	for _, n := range c.NotApplied {
		fmt.Fprintf(w, "> - %s\n", codeSpan(n))
	}
	fmt.Fprintln(w)
	if c.Diff != "" {
		fmt.Fprintf(w, "<details><summary>%s diff</summary>\n\n", htmlCode(c.File))
		writeFence(w, "diff", c.Diff)
		fmt.Fprintf(w, "\n</details>\n\n")
	}
}
