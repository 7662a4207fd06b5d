package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/report/write"
)

func TestGoldenReports(t *testing.T) {
	rep := entrytest.Build(t, entrytest.SampleInput(t), entry.Options{})
	var text, color, md, js bytes.Buffer
	if err := write.Text(&text, rep, write.TextOptions{ShowUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	if err := write.Text(&color, rep, write.TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if err := write.Markdown(&md, rep, write.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.txt", text.Bytes())
	golden.Check(t, "report.color.txt", color.Bytes())
	golden.Check(t, "report.md", md.Bytes())
	golden.Check(t, "report.json", js.Bytes())

	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "json": js.String()} {
		for _, secret := range []string{"s3cr3t", reporttest.B64("s3cr3t-old"), reporttest.B64("s3cr3t-new"), "@someone", "leak"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s report shows secret value %q", name, secret)
			}
		}
	}
	if rep.Complete || rep.Summary != (report.Summary{Add: 1, Modify: 2, Unchanged: 1, Error: 2, Risky: 1, NotPreviewed: 1, NotCovered: 1}) {
		t.Fatalf("summary = %+v complete=%v", rep.Summary, rep.Complete)
	}
	// Same input, byte-identical output.
	rep2 := entrytest.Build(t, entrytest.SampleInput(t), entry.Options{})
	var js2 bytes.Buffer
	_ = report.WriteJSON(&js2, rep2)
	if !bytes.Equal(js.Bytes(), js2.Bytes()) {
		t.Fatal("two builds of the same input differ")
	}
	var decoded map[string]any
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || decoded["schemaVersion"] != report.SchemaVersion {
		t.Fatalf("JSON does not decode with the schema version: %v", err)
	}
}

func TestShowSecretsLeavesValues(t *testing.T) {
	rep := entrytest.Build(t, entrytest.SampleInput(t), entry.Options{ShowSecrets: true})
	var js bytes.Buffer
	_ = report.WriteJSON(&js, rep)
	if !strings.Contains(js.String(), reporttest.B64("s3cr3t-new")) {
		t.Fatal("--show-secrets should show values")
	}
}

// TestGoldenBudgetedMarkdown: under a comment's budget, errors and risks come first,
// the risky object's diff is kept before larger ones, and what does not fit is named
// with a pointer to the full report; the summary-only variant has no objects.
func TestGoldenBudgetedMarkdown(t *testing.T) {
	rep := entrytest.Build(t, entrytest.BudgetInput(t, 12), entry.Options{})
	var full, budget, summary bytes.Buffer
	if err := write.Markdown(&full, rep, write.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	max := full.Len() * 2 / 3
	opts := write.MarkdownOptions{MaxBytes: max, FullReport: "[the job summary](https://github.example/run/1)"}
	if err := write.Markdown(&budget, rep, opts); err != nil {
		t.Fatal(err)
	}
	if err := write.Markdown(&summary, rep, write.MarkdownOptions{SummaryOnly: true}); err != nil {
		t.Fatal(err)
	}
	b := budget.String()
	if budget.Len() > max || strings.Count(b, "```")%2 != 0 {
		t.Errorf("budgeted report of %d bytes (max %d), or a fence left open", budget.Len(), max)
	}
	if !strings.Contains(b, "did not fit") || !strings.Contains(b, "details in [the job summary](https://github.example/run/1)") {
		t.Errorf("no diff was left out, or a left-out object does not point to the full report")
	}
	if !(strings.Index(b, "**Errors (2)**") < strings.Index(b, "**Risks (1)**") && strings.Index(b, "**Risks (1)**") < strings.Index(b, "| Target |")) {
		t.Errorf("errors and risks are not at the top")
	}
	if !strings.Contains(b, "+  password: '*** (after)'") {
		t.Errorf("the risky Secret's diff was left out")
	}
	golden.Check(t, "report.budget.md", budget.Bytes())
	golden.Check(t, "report.summary.md", summary.Bytes())
}

// TestBudgetKeepsErrorsAndRisksAmongThousands: with thousands of changed objects the
// comment names as many as half its budget holds, and never drops an error's or a
// risky object's line.
func TestBudgetKeepsErrorsAndRisksAmongThousands(t *testing.T) {
	rep := entrytest.Build(t, entrytest.BudgetInput(t, 3000), entry.Options{})
	var md bytes.Buffer
	if err := write.Markdown(&md, rep, write.MarkdownOptions{MaxBytes: 65536}); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	if md.Len() > 65536 {
		t.Fatalf("%d bytes over the budget", md.Len())
	}
	for _, want := range []string{"- ✏️ `v1 Secret shop/db`", "- ❌ `v1 Secret shop/tls`", "more objects: see the job summary", "- ✏️ `v1 ConfigMap shop/dash-000`"} {
		if !strings.Contains(s, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
}
