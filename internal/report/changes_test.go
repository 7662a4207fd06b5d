package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report/write"
)

func TestGoldenChangesReport(t *testing.T) {
	rep := entrytest.Build(t, entrytest.SampleInput(t), entry.Options{})
	var out bytes.Buffer
	if err := write.Changes(&out, rep, write.ChangesOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.changes.txt", out.Bytes())
	if strings.Contains(out.String(), "s3cr3t") {
		t.Fatal("a Secret value in -o changes")
	}
}

// TestUserMarkdownTemplate: a user's template redefines a part of the layout (here
// the summary line) over the built-in one, within the same budget; a broken one is an
// error naming the flag and the template.
func TestUserMarkdownTemplate(t *testing.T) {
	rep := entrytest.Build(t, entrytest.BudgetInput(t, 30), entry.Options{})
	file := filepath.Join(t.TempDir(), "mine.tmpl")
	if err := os.WriteFile(file, []byte(`{{define "line"}}* {{.Category}} {{code .Title}}{{range .Risks}} RISK {{.Rule}}{{end}}
{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := write.Markdown(&md, rep, write.MarkdownOptions{Template: file, MaxBytes: 8000}); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	if !strings.Contains(s, "* modify `v1 Secret shop/db` RISK secret-changed\n") || strings.Contains(s, "- ✏️") || md.Len() > 8000 || !strings.Contains(s, "**Risks (1)**") {
		t.Errorf("the user's line template was not used, or the budget was not kept (%d bytes):\n%s", md.Len(), s)
	}
	if err := os.WriteFile(file, []byte(`{{define "line"}}{{.NoSuchField}}{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := write.Markdown(&md, rep, write.MarkdownOptions{Template: file})
	if err == nil || !strings.Contains(err.Error(), "markdown template") || !strings.Contains(err.Error(), "NoSuchField") {
		t.Errorf("a broken template: %v", err)
	}
}
