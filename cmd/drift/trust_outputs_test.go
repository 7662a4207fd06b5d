package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/azure"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/steplog/steplogtest"
)

// stepLogHostile is text a repository or a cluster can put in a report: a workflow
// command to the runner on each of its lines, whichever way it ends.
const stepLogHostile = "values are wrong\n::add-mask::hunter2\r##[set-output name=has-changes]false\r\n  ::error file=README.md,line=1,title=drift::all clear, merge it\n\t::group::forged"

// TestTrustStepLogCarriesNoCommandFromAReport: in an Actions step (GITHUB_ACTIONS=true),
// a report whose errors, diffs, titles, warnings, notes and skipped reasons hold
// workflow commands, and an error message holding them, reach the step's stdout and
// stderr with no line the runner takes for a command but drift's own annotations,
// which read exactly as before. Without GITHUB_ACTIONS the same output carries the
// commands: the attack is real. The report is written as a run writes its own
// (finish: the text report, the step outputs, the annotations).
func TestTrustStepLogCarriesNoCommandFromAReport(t *testing.T) {
	dir := t.TempDir()
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Ref: "main", Commit: "0123456789abcdef0123456789abcdef01234567",
		Targets: []report.Target{
			{Name: "web\n::notice::target", Path: "apps/web", Renderer: "helm", Notes: []string{"note\n::add-mask::note-secret"}, Objects: []report.Object{
				{Category: report.Error, Source: "apps/web/Chart.yaml", ErrorReason: reason.RenderFailed, Error: stepLogHostile},
				{Category: report.Error, ID: report.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a\r::warning::title"},
					Source: "apps/web/cm.yaml", Document: 2, ErrorReason: reason.Invalid, Error: "refused: " + stepLogHostile},
				{Category: report.Modify, ID: report.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "motd"}, Source: "apps/web/motd.yaml",
					What: "data.motd\n##[add-mask]what", Warnings: []report.Message{{Reason: reason.ServerWarning, Message: "server says\r\n::add-mask::warned"}},
					Diff: "--- live/v1.ConfigMap.shop.motd\n+++ merged/v1.ConfigMap.shop.motd\n@@ -1,5 +1,5 @@\n data:\n   motd: |\n-    hello\n+    hello world\n     ::add-mask::hunter2\n     ##[set-output name=has-changes]false\n       ::error file=README.md,line=1,title=drift::all clear\r\n"},
			}},
			{Name: "skipped", Skipped: "unchanged\n::add-mask::skip-secret"},
		}}
	rep.Summary = report.Summary{Error: 2, Modify: 1}
	rep.Complete = false
	t.Setenv("GITHUB_OUTPUT", filepath.Join(dir, "outputs"))
	write := func(outputs bool) outcome {
		var out, errOut bytes.Buffer
		code := execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func(s genericiooptions.IOStreams) error {
			o := &app.Run{Output: "text", Report: app.Report{Color: "never"}}
			o.GitHub.Outputs = outputs
			r := *rep
			return app.NewConfig(s.Out, s.ErrOut).Finish(context.Background(), o, &r)
		})
		return outcome{code: code, stdout: out.String(), stderr: errOut.String()}
	}

	// Not in Actions: the hostile lines are commands in the text report.
	t.Setenv("GITHUB_ACTIONS", "")
	plain := write(false)
	if len(steplogtest.Commands(plain.stdout)) < 4 {
		steplogtest.Fatalf(t, "the report's text carries %d commands outside Actions; the test's hostile report is not hostile:\n%s", len(steplogtest.Commands(plain.stdout)), plain.stdout)
	}

	t.Setenv("GITHUB_ACTIONS", "true")
	o := write(true)
	if o.code != 2 {
		steplogtest.Fatalf(t, "exit %d, want 2 (errors)\n%s", o.code, o.stderr)
	}
	if cmds := steplogtest.Commands(o.stdout); len(cmds) > 0 {
		steplogtest.Errorf(t, "stdout carries %d commands, the first %q:\n%s", len(cmds), cmds[0].Line, o.stdout)
	}
	// Neutralised, not lost: the report still shows every line.
	if s := strings.ReplaceAll(o.stdout, "\u200b", ""); s != plain.stdout {
		steplogtest.Errorf(t, "the neutralised report differs from the report beyond zero-width spaces:\n%s\nwant\n%s", s, plain.stdout)
	}
	want := []steplogtest.Command{
		{Name: "error", Properties: map[string]string{"file": "apps/web/Chart.yaml", "title": "drift: render-failed"}, Data: stepLogHostile},
		{Name: "error", Properties: map[string]string{"file": "apps/web/cm.yaml", "title": `drift: invalid v1 ConfigMap shop/"a\r::warning::title"`}, Data: "refused: " + stepLogHostile},
	}
	checkCommands(t, "stderr", o.stderr, want)

	// An error message holding commands, on stderr.
	var out, errOut bytes.Buffer
	code := execute(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, func(genericiooptions.IOStreams) error {
		return errors.New("base main\r::add-mask::base-secret\n##[set-env name=A]b is not a commit")
	})
	if code != 2 || !strings.Contains(strings.ReplaceAll(errOut.String(), "\u200b", ""), "::add-mask::base-secret") {
		steplogtest.Fatalf(t, "exit %d, want 2 and the error quoting the base:\n%s", code, errOut.String())
	}
	checkCommands(t, "the error on stderr", errOut.String(), nil)
}

// TestTrustStepLogCarriesNoCommandFromARun: the attack as a repository makes it, on a
// real API server. A Helm chart's fail message and a kustomization entry hold
// workflow commands, and so does a multi-line value whose unchanged lines are the
// diff's context lines; in an Actions step drift's stdout and stderr carry no command
// but the annotations of the two errors, which read as the report's errors.
func TestTrustStepLogCarriesNoCommandFromARun(t *testing.T) {
	ns := namespace(t)
	motd := func(first string) string {
		return sub(`apiVersion: v1
kind: ConfigMap
metadata: {name: motd, namespace: NS}
data:
  motd: |
    `+first+`
    ::add-mask::hunter2
    ##[set-output name=has-changes]false
      ::error file=README.md,line=1,title=drift::all clear, merge it
`, ns)
	}
	apply(t, "kubectl", motd("hello"))
	r := repo(t, map[string]string{
		"drift.yaml":              sub("targets:\n  - {name: chart, path: chart, namespace: NS}\n  - {name: kust, path: kust, namespace: NS}\n  - {name: plain, path: plain, namespace: NS}\n", ns),
		"chart/Chart.yaml":        "apiVersion: v2\nname: chart\nversion: 1.0.0\n",
		"chart/templates/cm.yaml": `{{ fail "values are wrong\n::add-mask::hunter2\r##[set-output name=has-changes]false\r\n  ::error file=README.md,line=1::forged" }}` + "\n",
		"kust/kustomization.yaml": "resources:\n- \"missing\\n::warning title=x::forged\\r##[add-mask]y.yaml\"\n",
		"plain/motd.yaml":         motd("hello world"),
	})
	dir := t.TempDir()
	t.Setenv("GITHUB_OUTPUT", filepath.Join(dir, "outputs"))
	jsonReport := filepath.Join(dir, "report.json")

	t.Setenv("GITHUB_ACTIONS", "")
	plain := drift(t, "diff", "--repo", r.Dir, "--ref", "main")
	if len(steplogtest.Commands(plain.stdout)) < 3 {
		steplogtest.Fatalf(t, "the report's text carries %d commands outside Actions; the test's repository is not hostile:\n%s", len(steplogtest.Commands(plain.stdout)), plain.stdout)
	}

	t.Setenv("GITHUB_ACTIONS", "true")
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-output", "--json-report", jsonReport)
	if o.code != 2 {
		steplogtest.Fatalf(t, "exit %d, want 2 (errors)\n%s", o.code, o.stderr)
	}
	if cmds := steplogtest.Commands(o.stdout); len(cmds) > 0 {
		steplogtest.Errorf(t, "stdout carries %d commands, the first %q:\n%s", len(cmds), cmds[0].Line, o.stdout)
	}
	stripped := strings.ReplaceAll(o.stdout, "\u200b", "")
	for _, line := range []string{"     ::add-mask::hunter2\n", "       ::error file=README.md,line=1,title=drift::all clear, merge it\n", "::warning title=x::forged"} {
		if !strings.Contains(stripped, line) {
			steplogtest.Errorf(t, "the report lacks %q:\n%s", line, o.stdout)
		}
	}
	data, err := os.ReadFile(jsonReport)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	var want []steplogtest.Command
	for _, tg := range rep.Targets {
		for _, ob := range tg.Objects {
			if ob.Category == report.Error {
				want = append(want, steplogtest.Command{Name: "error", Properties: map[string]string{"file": ob.Source, "title": "drift: " + string(ob.ErrorReason)}, Data: ob.Error})
			}
		}
	}
	if len(want) != 2 || !strings.Contains(want[0].Data+want[1].Data, "::add-mask::hunter2") || !strings.Contains(want[0].Data+want[1].Data, "::warning title=x::forged") {
		steplogtest.Fatalf(t, "want the chart's and the kustomization's errors, quoting their commands: %+v", want)
	}
	checkCommands(t, "stderr", o.stderr, want)
}

// checkCommands fails unless the commands the runner reads in log are want, in order,
// with the same name, properties and data.
func checkCommands(t *testing.T, what, log string, want []steplogtest.Command) {
	t.Helper()
	got := steplogtest.Commands(log)
	if len(got) != len(want) {
		steplogtest.Errorf(t, "%s carries %d commands, want %d:\n%s", what, len(got), len(want), log)
		return
	}
	for i, w := range want {
		g := got[i]
		same := g.Name == w.Name && g.Data == w.Data && len(g.Properties) == len(w.Properties)
		for k, v := range w.Properties {
			same = same && g.Properties[k] == v
		}
		if !same {
			steplogtest.Errorf(t, "%s: command %d reads as %+v, want %+v", what, i, g, w)
		}
	}
}

func writeReportFile(t *testing.T, path string, rep *report.Report) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := report.WriteJSON(f, rep); err != nil {
		t.Fatal(err)
	}
}

// TestTrustAzureLogCarriesNoLoggingCommand: in an Azure Pipelines step (TF_BUILD=True)
// a report and an error message holding the agent's logging commands ("##vso[" anywhere
// in a line, with characters the agent's culture-sensitive search skips) reach stdout
// and stderr with no line the agent would run (azure.AgentWouldRead); outside one the
// same output carries them: the attack is real.
func TestTrustAzureLogCarriesNoLoggingCommand(t *testing.T) {
	hostile := "values are wrong ##vso[task.setvariable variable=DRIFT_HAS_CHANGES]false\n##\u200bvso[task.setsecret]x\r##[group]forged"
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Ref: "main", Commit: "0123456789abcdef0123456789abcdef01234567",
		Targets: []report.Target{{Name: "web ##vso[task.prependpath]/tmp/evil", Path: "apps/web", Objects: []report.Object{
			{Category: report.Error, Source: "apps/web/cm.yaml", ErrorReason: reason.Invalid, Error: hostile},
			{Category: report.Modify, ID: report.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "motd"}, Source: "apps/web/motd.yaml",
				Diff: "--- live/v1.ConfigMap.shop.motd\n+++ merged/v1.ConfigMap.shop.motd\n@@ -1,2 +1,2 @@\n-    hello\n+    hello ##vso[artifact.upload]x\n     ##vso[task.complete result=Succeeded]done\n"},
		}}}}
	rep.Summary = report.Summary{Error: 1, Modify: 1}
	write := func() (string, string) {
		var out, errOut bytes.Buffer
		execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func(s genericiooptions.IOStreams) error {
			r := *rep
			// The report's exit status is left for the error, which drift prints.
			_ = app.NewConfig(s.Out, s.ErrOut).Finish(context.Background(), &app.Run{Output: "text", Report: app.Report{Color: "never"}}, &r)
			return fmt.Errorf("the base %s", hostile)
		})
		return out.String(), errOut.String()
	}
	read := func(text string) []string {
		var cmds []string
		for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if azure.AgentWouldRead(line) {
				cmds = append(cmds, line)
			}
		}
		return cmds
	}
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("TF_BUILD", "")
	out, errOut := write()
	if len(read(out)) < 3 || len(read(errOut)) < 2 {
		t.Fatalf("outside Azure Pipelines the output carries %d and %d commands; the report is not hostile:\n%s\n%s", len(read(out)), len(read(errOut)), out, errOut)
	}
	t.Setenv("TF_BUILD", "True")
	out2, errOut2 := write()
	if cmds := append(read(out2), read(errOut2)...); len(cmds) > 0 {
		t.Errorf("the agent would run %q", cmds)
	}
	if strings.Count(out2, "\n") != strings.Count(out, "\n") || !strings.Contains(out2, "task.prependpath") {
		t.Errorf("the inert report lost lines:\n%s\nwant\n%s", out2, out)
	}
}
