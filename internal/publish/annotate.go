package publish

import (
	"fmt"
	"io"
	"strings"

	"github.com/drift-gitops/drift/internal/report"
)

// maxAnnotations is how many error annotations a run writes; GitHub shows ten per
// step, and the report has them all.
const maxAnnotations = 50

// annotate writes a workflow command per error object, so GitHub marks the manifest's
// file and line (the first line of the object's YAML document) in the pull request's
// files: "::error file=apps/web.yaml,line=12,title=drift: invalid::message".
func annotate(w io.Writer, rep *report.Report, line func(source string, doc int) int) {
	n := 0
	for _, t := range rep.Targets {
		for _, o := range t.Objects {
			if o.Category != report.Error || o.Source == "" {
				continue
			}
			if n++; n > maxAnnotations {
				fmt.Fprintf(w, "::warning title=drift::%s\n", escapeData(fmt.Sprintf("%d more errors are not annotated: see the report", rep.Summary.Error-maxAnnotations)))
				return
			}
			props := "file=" + escapeProperty(o.Source)
			if line != nil {
				if l := line(o.Source, o.Document); l > 0 {
					props += fmt.Sprintf(",line=%d", l)
				}
			}
			why := string(o.ErrorReason)
			if why == "" {
				why = "error"
			}
			title := "drift: " + why
			if o.Kind != "" {
				title += " " + o.Title()
			}
			fmt.Fprintf(w, "::error %s,title=%s::%s\n", props, escapeProperty(title), escapeData(o.Error))
		}
	}
}

// escapeData escapes a workflow command's message as the runner reads it.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
