package write_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
)

// TestReportWritesEachFormatAsItsWriter: Report is the format's own writer, with the
// options it is given.
func TestReportWritesEachFormatAsItsWriter(t *testing.T) {
	rep := build(t, entrytest.SampleInput(t), entry.Options{})
	var text, color, md, js bytes.Buffer
	_ = write.Text(&text, rep, write.TextOptions{ShowUnchanged: true})
	_ = write.Text(&color, rep, write.TextOptions{Color: true})
	_ = write.Markdown(&md, rep, write.MarkdownOptions{})
	_ = report.WriteJSON(&js, rep)
	for _, c := range []struct {
		opts write.Options
		want string
	}{
		{write.Options{ShowUnchanged: true}, text.String()},
		{write.Options{Format: "text", Color: true}, color.String()},
		{write.Options{Format: "markdown"}, md.String()},
		{write.Options{Format: "json"}, js.String()},
	} {
		var got bytes.Buffer
		if err := write.Report(context.Background(), &got, rep, c.opts); err != nil {
			t.Fatalf("%+v: %v", c.opts, err)
		}
		if got.String() != c.want {
			t.Errorf("%+v wrote another report:\n%s", c.opts, got.String())
		}
	}
}

// exitStatus is a program's exit status as Exec reports it.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e exitStatus) ExitCode() int { return int(e) }

// program is an Exec standing in for the external diff program: it records each run,
// with the files of the directories it is given, and exits with status.
type program struct {
	status int
	runs   []write.Command
	files  []string
}

func (p *program) run(ctx context.Context, c write.Command) error {
	p.runs = append(p.runs, c)
	for _, dir := range c.Args[:2] {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			p.files = append(p.files, filepath.Base(dir)+"/"+e.Name())
		}
	}
	fmt.Fprintf(c.Stdout, "diff of %s and %s\n", filepath.Base(c.Args[0]), filepath.Base(c.Args[1]))
	if p.status != 0 {
		return exitStatus(p.status)
	}
	return nil
}

// TestReportHandsDiffsToTheExternalProgram: with KUBECTL_EXTERNAL_DIFF's value the
// text report has no diffs and runs the program after the objects, on the dumped
// sides, with kubectl's arguments; exit status 1 (differences) is success, others
// fail; without changes it runs nothing.
func TestReportHandsDiffsToTheExternalProgram(t *testing.T) {
	rep := build(t, entrytest.SampleInput(t), entry.Options{})
	var out, stderr bytes.Buffer
	p := &program{status: 1}
	opts := write.Options{ExternalDiff: "meld -x $(touch pwned) --opt=1", Stderr: &stderr, Exec: p.run}
	if err := write.Report(context.Background(), &out, rep, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Diff from "+write.ExternalDiffEnv+":\ndiff of live and merged\n") || strings.Contains(out.String(), "@@") {
		t.Errorf("the report should leave its diffs to the program:\n%s", out.String())
	}
	if len(p.runs) != 1 || p.runs[0].Name != "meld" || strings.Join(p.runs[0].Args[2:], " ") != "-x --opt=1" || p.runs[0].Stderr != &stderr {
		t.Fatalf("runs %+v, want meld once with the words kubectl keeps", p.runs)
	}
	if want := "live/v1.ConfigMap.shop.settings live/v1.Secret.shop.db merged/v1.ConfigMap.shop.settings merged/v1.Secret.shop.db merged/v1.Service.shop.web"; strings.Join(p.files, " ") != want {
		t.Errorf("the program was given %v, want %s", p.files, want)
	}
	p.status = 2
	if err := write.Report(context.Background(), &out, rep, opts); err == nil || !strings.Contains(err.Error(), `KUBECTL_EXTERNAL_DIFF program "meld" failed: exit status 2`) {
		t.Errorf("exit status 2: %v", err)
	}
	rep.Summary = report.Summary{Unchanged: 1}
	out.Reset()
	p.runs = nil
	if err := write.Report(context.Background(), &out, rep, opts); err != nil || len(p.runs) != 0 {
		t.Errorf("no changes, yet the program ran: %v", err)
	}
	if strings.Contains(out.String(), "Diff from") {
		t.Errorf("no changes, yet a diff section:\n%s", out.String())
	}
}
