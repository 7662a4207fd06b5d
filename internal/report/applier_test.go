package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/report/write"
)

// An object another applier manages is counted in the summary and called out at the
// top of the markdown and the foot of the text; an absent object the applier sends
// nothing for stays absent, so it is unchanged, not an addition.
func TestApplierMismatchIsCountedAndAnIgnoredAbsentObjectIsUnchanged(t *testing.T) {
	t.Parallel()
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop}\ndata: {" + data + "}\n"
	}
	mismatched := reporttest.Result(t, "a.yaml", 1, cm("a", "k: v"), cm("a", "k: v"), cm("a", "k: v"))
	mismatched.Warnings = []dryrun.Message{{Reason: reason.ApplierMismatch, Message: "managed by kustomize-controller"}}
	ignored := reporttest.Result(t, "b.yaml", 1, cm("b", "k: v"), "", "")
	ignored.Warnings = []dryrun.Message{{Reason: reason.NotApplied, Message: "flux sends nothing for this object"}}
	in := entry.Input{Targets: []entry.TargetInput{{Name: "shop", Applier: "kubectl", Results: []dryrun.Result{mismatched, ignored}}}}
	rep := entrytest.Build(t, in, entry.Options{})
	if s := rep.Summary; s.ApplierMismatch != 1 || s.Unchanged != 2 || s.Changes() != 0 {
		t.Fatalf("summary %+v, want 2 unchanged, 1 applier mismatch, no changes", s)
	}
	var js bytes.Buffer
	if err := report.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Summary struct {
			ApplierMismatch int `json:"applierMismatch"`
		} `json:"summary"`
		Targets []struct {
			Applier string `json:"applier"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded.Summary.ApplierMismatch != 1 || decoded.Targets[0].Applier != "kubectl" {
		t.Fatalf("JSON has applierMismatch %d and applier %q", decoded.Summary.ApplierMismatch, decoded.Targets[0].Applier)
	}
	var md, txt bytes.Buffer
	if err := write.Markdown(&md, rep, write.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := write.Text(&txt, rep, write.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "1 object is managed in the cluster by another applier than its target's (applier-mismatch)"
	if !strings.Contains(md.String(), "> [!WARNING]\n> "+want) {
		t.Errorf("markdown does not call the mismatch out:\n%s", md.String())
	}
	if !strings.Contains(txt.String(), want) {
		t.Errorf("text does not say it:\n%s", txt.String())
	}
}
