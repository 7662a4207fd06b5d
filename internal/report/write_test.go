package report

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestWriteWritesEachFormatAsItsWriter: Write is the format's own writer, with the
// options it is given.
func TestWriteWritesEachFormatAsItsWriter(t *testing.T) {
	rep, err := Build(sampleInput(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text, color, md, js bytes.Buffer
	_ = WriteText(&text, rep, TextOptions{ShowUnchanged: true})
	_ = WriteText(&color, rep, TextOptions{Color: true})
	_ = WriteMarkdown(&md, rep, MarkdownOptions{})
	_ = WriteJSON(&js, rep)
	for _, c := range []struct {
		opts WriteOptions
		want string
	}{
		{WriteOptions{ShowUnchanged: true}, text.String()},
		{WriteOptions{Format: "text", Color: true}, color.String()},
		{WriteOptions{Format: "markdown"}, md.String()},
		{WriteOptions{Format: "json"}, js.String()},
	} {
		var got bytes.Buffer
		if err := Write(context.Background(), &got, rep, c.opts); err != nil {
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
	rep, err := Build(sampleInput(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	if err := Write(context.Background(), &out, rep, WriteOptions{ExternalDiff: "true", Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Diff from "+ExternalDiffEnv+":") || strings.Contains(out.String(), "@@") {
		t.Errorf("the report should leave its diffs to the program:\n%s", out.String())
	}
	rep.Summary = Summary{Unchanged: 1}
	out.Reset()
	if err := Write(context.Background(), &out, rep, WriteOptions{ExternalDiff: "no-such-program-drift", Stderr: &stderr}); err != nil {
		t.Errorf("no changes, yet the program ran: %v", err)
	}
	if strings.Contains(out.String(), "Diff from") {
		t.Errorf("no changes, yet a diff section:\n%s", out.String())
	}
}
