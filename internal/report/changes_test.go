package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/golden"
)

// TestFieldChangesKeyListsByMergeKey: containers, env and ports are matched by their
// keys, not their places, so a reordered or inserted element is one change, and
// annotation keys with dots are quoted.
func TestFieldChangesKeyListsByMergeKey(t *testing.T) {
	live := obj(t, `
metadata: {annotations: {app.kubernetes.io/version: "1.4"}}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: web, image: "web:1.4", env: [{name: A, value: "1"}, {name: B, value: "2"}], ports: [{containerPort: 80}]}
      - {name: log, image: "log:2"}
      args: [a, b]
`)
	merged := obj(t, `
metadata: {annotations: {app.kubernetes.io/version: "1.5"}}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - {name: sidecar, image: "proxy:1"}
      - {name: web, image: "web:1.5", env: [{name: B, value: "2"}, {name: A, value: "1"}, {name: C, value: "3"}], ports: [{containerPort: 80}, {containerPort: 443}]}
      args: [a, b, c]
`)
	got, _ := json.MarshalIndent(fieldChanges(live.Object, merged.Object), "", "  ")
	golden.Check(t, "changes.json", append(got, '\n'))
	if w := whatChanged("Deployment", fieldChanges(live.Object, merged.Object)); w != "image web:1.4 → 1.5, replicas 2 → 3, 6 more fields" {
		t.Errorf("what = %q", w)
	}
}

func TestWhatChangedForData(t *testing.T) {
	live := obj(t, "data: {a: '1', b: '2', c: '3'}\nmetadata: {labels: {x: y}}")
	merged := obj(t, "data: {a: '1', b: '9', d: '4', e: '5'}\nmetadata: {labels: {x: z}}")
	if w := whatChanged("ConfigMap", fieldChanges(live.Object, merged.Object)); w != "data keys +2 −1 ~1, 1 more field" {
		t.Errorf("what = %q", w)
	}
}

func TestGoldenChangesReport(t *testing.T) {
	rep, err := Build(sampleInput(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteChanges(&out, rep, ChangesOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.changes.txt", out.Bytes())
	if strings.Contains(out.String(), "s3cr3t") {
		t.Fatal("a Secret value in -o changes")
	}
}

func TestPolicy(t *testing.T) {
	rep, err := Build(sampleInput(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep.Complete, rep.Summary.Error = true, 0 // judged as if complete
	for _, c := range []struct {
		failOn []string
		failed bool
		note   string
	}{
		{nil, false, ""},
		{[]string{"delete"}, false, ""},
		{[]string{"risk"}, true, "Policy failed (fail on risk): 1 risky object."},
		{[]string{"change", "risk", "risk"}, true, "Policy failed (fail on risk, change): 1 risky object, 3 changes."},
	} {
		if err := rep.ApplyPolicy(c.failOn); err != nil {
			t.Fatal(err)
		}
		if rep.PolicyFailed() != c.failed || rep.PolicyNote() != c.note {
			t.Errorf("fail on %v: failed=%v note=%q", c.failOn, rep.PolicyFailed(), rep.PolicyNote())
		}
	}
	if err := rep.ApplyPolicy([]string{"risky"}); err == nil || !strings.Contains(err.Error(), "error, risk, delete, change") {
		t.Errorf("an unknown value: %v", err)
	}
}

// TestUserMarkdownTemplate: a user's template redefines a part of the layout (here
// the summary line) over the built-in one, within the same budget; a broken one is an
// error naming the flag and the template.
func TestUserMarkdownTemplate(t *testing.T) {
	rep, err := Build(budgetInput(t, 30), Options{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mine.tmpl")
	if err := os.WriteFile(file, []byte(`{{define "line"}}* {{.Category}} {{code .Title}}{{range .Risks}} RISK {{.Rule}}{{end}}
{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep, MarkdownOptions{Template: file, MaxBytes: 8000}); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	if !strings.Contains(s, "* modify `v1 Secret shop/db` RISK secret-changed\n") || strings.Contains(s, "- ✏️") || md.Len() > 8000 || !strings.Contains(s, "**Risks (1)**") {
		t.Errorf("the user's line template was not used, or the budget was not kept (%d bytes):\n%s", md.Len(), s)
	}
	if err := os.WriteFile(file, []byte(`{{define "line"}}{{.NoSuchField}}{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = WriteMarkdown(&md, rep, MarkdownOptions{Template: file})
	if err == nil || !strings.Contains(err.Error(), "markdown template") || !strings.Contains(err.Error(), "NoSuchField") {
		t.Errorf("a broken template: %v", err)
	}
}
