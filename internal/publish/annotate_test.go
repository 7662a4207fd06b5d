package publish

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

// TestAnnotationsNameFileLineAndEscape: one workflow command per error, on the
// document's line, its properties and message escaped so that a message cannot end
// the command or start another.
func TestAnnotationsNameFileLineAndEscape(t *testing.T) {
	rep := &report.Report{Summary: report.Summary{Error: 2}, Targets: []report.Target{{Name: "web", Objects: []report.Object{
		{Category: report.Error, ID: object.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"}, Source: "apps/web,1.yaml", Document: 2,
			Error: "bad: 100%\n::error::forged", ErrorReason: reason.Invalid},
		{Category: report.Error, Source: "apps/broken.yaml", Error: "malformed YAML", ErrorReason: reason.Malformed},
		{Category: report.Modify, ID: object.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "b"}, Source: "apps/b.yaml"},
	}}}}
	var out bytes.Buffer
	annotate(&out, rep, func(source string, doc int) int {
		if source == "apps/web,1.yaml" && doc == 2 {
			return 7
		}
		return 0
	})
	want := "::error file=apps/web%2C1.yaml,line=7,title=drift%3A invalid v1 ConfigMap shop/a::bad: 100%25%0A::error::forged\n" +
		"::error file=apps/broken.yaml,title=drift%3A malformed::malformed YAML\n"
	if out.String() != want {
		t.Errorf("annotations:\n%s\nwant:\n%s", out.String(), want)
	}
	if strings.Count(out.String(), "\n") != 2 {
		t.Error("a message wrote a line of its own")
	}
}
