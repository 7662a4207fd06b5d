package publish

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/steplog"
	"github.com/drift-gitops/drift/internal/steplog/steplogtest"
)

// TestAnnotationsNameFileLineAndEscape: one workflow command per error, on the
// document's line, its properties and message escaped so that a message cannot end
// the command or start another.
func TestAnnotationsNameFileLineAndEscape(t *testing.T) {
	rep := annotated()
	var out bytes.Buffer
	if err := annotate(steplog.CommandsTo(&out), rep, docLine); err != nil {
		t.Fatal(err)
	}
	want := "::error file=apps/web%2C1.yaml,line=7,title=drift%3A invalid v1 ConfigMap shop/a::bad: 100%25%0A::error::forged\n" +
		"::error file=apps/broken.yaml,title=drift%3A malformed::malformed YAML\n"
	if out.String() != want {
		steplogtest.Errorf(t, "annotations:\n%s\nwant:\n%s", out.String(), want)
	}
	if strings.Count(out.String(), "\n") != 2 {
		t.Error("a message wrote a line of its own")
	}
}

// TestAnnotationsPassTheStepLogWhole: published through a step log's stderr
// (steplog.Writer) after hostile text, the annotations are the log's only commands and
// read, as the runner parses them, exactly as they did before the log was neutralised.
func TestAnnotationsPassTheStepLogWhole(t *testing.T) {
	var log bytes.Buffer
	stderr := steplog.NewWriter(&log)
	stderr.Write([]byte("drift: warning: chart says\n  ::add-mask::x\r##[set-output name=a]b\nunfinished "))
	if err := Run(t.Context(), annotated(), Options{Annotate: true}, Deps{Getenv: func(string) string { return "" }, Stderr: stderr,
		Commands: steplog.CommandsTo(stderr), DocumentLine: docLine}); err != nil {
		t.Fatal(err)
	}
	stderr.Flush()
	got := steplogtest.Commands(log.String())
	if len(got) != 2 {
		steplogtest.Fatalf(t, "%d commands in the log, want the 2 annotations:\n%s", len(got), log.String())
	}
	want := []steplogtest.Command{
		{Name: "error", Properties: map[string]string{"file": "apps/web,1.yaml", "line": "7", "title": "drift: invalid v1 ConfigMap shop/a"}, Data: "bad: 100%\n::error::forged"},
		{Name: "error", Properties: map[string]string{"file": "apps/broken.yaml", "title": "drift: malformed"}, Data: "malformed YAML"},
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || g.Data != w.Data || len(g.Properties) != len(w.Properties) {
			steplogtest.Errorf(t, "annotation %d reads as %+v, want %+v", i, g, w)
			continue
		}
		for k, v := range w.Properties {
			if g.Properties[k] != v {
				steplogtest.Errorf(t, "annotation %d: %s=%q, want %q", i, k, g.Properties[k], v)
			}
		}
	}
}

func annotated() *report.Report {
	return &report.Report{Summary: report.Summary{Error: 2}, Targets: []report.Target{{Name: "web", Objects: []report.Object{
		{Category: report.Error, ID: report.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"}, Source: "apps/web,1.yaml", Document: 2,
			Error: "bad: 100%\n::error::forged", ErrorReason: reason.Invalid},
		{Category: report.Error, Source: "apps/broken.yaml", Error: "malformed YAML", ErrorReason: reason.Malformed},
		{Category: report.Modify, ID: report.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "b"}, Source: "apps/b.yaml"},
	}}}}
}

func docLine(source string, doc int) int {
	if source == "apps/web,1.yaml" && doc == 2 {
		return 7
	}
	return 0
}
