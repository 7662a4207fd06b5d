package report_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
)

// TestWriteWritesEachFormatAsItsWriter: report.Write is the format's own writer, with the
// options it is given.
func TestWriteWritesEachFormatAsItsWriter(t *testing.T) {
	rep := build(t, reporttest.SampleInput(t), entry.Options{})
	var text, color, md, js bytes.Buffer
	_ = report.WriteText(&text, rep, report.TextOptions{ShowUnchanged: true})
	_ = report.WriteText(&color, rep, report.TextOptions{Color: true})
	_ = report.WriteMarkdown(&md, rep, report.MarkdownOptions{})
	_ = report.WriteJSON(&js, rep)
	for _, c := range []struct {
		opts report.WriteOptions
		want string
	}{
		{report.WriteOptions{ShowUnchanged: true}, text.String()},
		{report.WriteOptions{Format: "text", Color: true}, color.String()},
		{report.WriteOptions{Format: "markdown"}, md.String()},
		{report.WriteOptions{Format: "json"}, js.String()},
	} {
		var got bytes.Buffer
		if err := report.Write(context.Background(), &got, rep, c.opts); err != nil {
			t.Fatalf("%+v: %v", c.opts, err)
		}
		if got.String() != c.want {
			t.Errorf("%+v wrote another report:\n%s", c.opts, got.String())
		}
	}
}

// TestWriteHandsDiffsToTheExternalProgram: with KUBECTL_EXTERNAL_DIFF's value the text
// report has no diffs and runs the program after the objects; without changes it
// runs nothing.
func TestWriteHandsDiffsToTheExternalProgram(t *testing.T) {
	rep := build(t, reporttest.SampleInput(t), entry.Options{})
	var out, stderr bytes.Buffer
	if err := report.Write(context.Background(), &out, rep, report.WriteOptions{ExternalDiff: "true", Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Diff from "+report.ExternalDiffEnv+":") || strings.Contains(out.String(), "@@") {
		t.Errorf("the report should leave its diffs to the program:\n%s", out.String())
	}
	rep.Summary = report.Summary{Unchanged: 1}
	out.Reset()
	if err := report.Write(context.Background(), &out, rep, report.WriteOptions{ExternalDiff: "no-such-program-drift", Stderr: &stderr}); err != nil {
		t.Errorf("no changes, yet the program ran: %v", err)
	}
	if strings.Contains(out.String(), "Diff from") {
		t.Errorf("no changes, yet a diff section:\n%s", out.String())
	}
}
