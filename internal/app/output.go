package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
)

// write sends the report to stdout or --out, and fills --dump.
func (o *Run) write(ctx context.Context, rep *report.Report) error {
	// An object --dump refuses is named in the error, after the report is written.
	var dumpErr error
	if o.Dump != "" {
		dumpErr = write.Dump(o.Dump, rep)
	}
	out := o.cfg.Out
	var file io.WriteCloser
	if o.OutFile != "" {
		f, err := files.Or(o.cfg.Files).Create(o.OutFile)
		if err != nil {
			return fmt.Errorf("failed to create --out file: %w", err)
		}
		file, out = f, f
	}
	externalDiff := o.cfg.Getenv(write.ExternalDiffEnv)
	if !holdsObjects(rep) {
		externalDiff = ""
	}
	err := write.Report(ctx, out, rep, write.Options{
		Format:           o.Output,
		ShowUnchanged:    o.ShowUnchanged,
		Color:            o.Report.color(out, o.cfg.Getenv),
		ExternalDiff:     externalDiff,
		Stderr:           o.cfg.ErrOut,
		MarkdownTemplate: o.Report.MarkdownTemplate,
	})
	if file != nil {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("failed to write --out file: %w", cerr)
		}
	}
	if o.Report.HTML != "" && err == nil {
		err = writeHTML(files.Or(o.cfg.Files), o.Report.HTML, rep)
	}
	if dumpErr != nil {
		dumpErr = fmt.Errorf("--dump: %w", dumpErr)
	}
	return errors.Join(dumpErr, err)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress shows "previewing 120/1000 objects" on stderr when it is a terminal.
type progress struct {
	w     io.Writer
	verb  string
	shown bool
}

// newProgress shows progress on w if it is a terminal, and nothing otherwise.
func newProgress(w io.Writer, verb string) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w, verb: verb}
}

// update shows that done of total objects are previewed.
func (p *progress) update(done, total int) {
	if p.w == nil {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\rdrift: %s %d/%d objects", p.verb, done, total)
}

// done clears the progress line, if one was shown.
func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// writeHTML writes the HTML report (--html) to fsys.
func writeHTML(fsys files.FS, name string, rep *report.Report) error {
	f, err := fsys.Create(name)
	if err != nil {
		return fmt.Errorf("failed to create --html file: %w", err)
	}
	err = write.HTML(f, rep)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("failed to write --html file: %w", cerr)
	}
	return err
}

// holdsObjects reports whether the report holds the objects of its changes, which
// an external diff program (KUBECTL_EXTERNAL_DIFF) compares: a report read back
// from JSON (drift report merge, drift report) holds only the diffs, which are then
// shown as they are. A run's report holds both sides of every change it counts.
func holdsObjects(rep *report.Report) bool {
	for _, t := range rep.Targets {
		for _, o := range t.Objects {
			if o.FromYAML != "" || o.ToYAML != "" {
				return true
			}
		}
	}
	return false
}
