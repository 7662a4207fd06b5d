package publish

import (
	"fmt"
	"strconv"

	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/steplog"
)

// maxAnnotations is how many error annotations a run writes; GitHub shows ten per
// step, and the report has them all.
const maxAnnotations = 50

// annotate writes a workflow command per error object, so GitHub marks the manifest's
// file and line (the first line of the object's YAML document) in the pull request's
// files: "::error file=apps/web.yaml,line=12,title=drift: invalid::message". The
// commands go through w, the step log's path for drift's own commands, which
// escapes their properties and messages.
func annotate(w steplog.Commands, rep *report.Report, line func(source string, doc int) int) error {
	n := 0
	for _, t := range rep.Targets {
		for _, o := range t.Objects {
			if o.Category != report.Error || o.Source == "" {
				continue
			}
			if n++; n > maxAnnotations {
				return w.WriteCommand(steplog.Command{Name: "warning", Properties: []steplog.Property{{Key: "title", Value: "drift"}},
					Message: fmt.Sprintf("%d more errors are not annotated: see the report", rep.Summary.Error-maxAnnotations)})
			}
			props := []steplog.Property{{Key: "file", Value: o.Source}}
			if line != nil {
				if l := line(o.Source, o.Document); l > 0 {
					props = append(props, steplog.Property{Key: "line", Value: strconv.Itoa(l)})
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
			props = append(props, steplog.Property{Key: "title", Value: title})
			if err := w.WriteCommand(steplog.Command{Name: "error", Properties: props, Message: o.Error}); err != nil {
				return err
			}
		}
	}
	return nil
}
