package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/drift-gitops/drift/internal/report"
)

// write sends the report to stdout or --out, and fills --dump.
func (o *diffOptions) write(ctx context.Context, rep *report.Report) error {
	// An object --dump refuses is named in the error, after the report is written.
	var dumpErr error
	if o.Dump != "" {
		dumpErr = report.Dump(o.Dump, rep)
	}
	out := o.streams.Out
	var file *os.File
	if o.OutFile != "" {
		if err := os.MkdirAll(filepath.Dir(o.OutFile), 0o755); err != nil {
			return fmt.Errorf("failed to create the directory for --out: %w", err)
		}
		f, err := os.Create(o.OutFile)
		if err != nil {
			return fmt.Errorf("failed to create --out file: %w", err)
		}
		file, out = f, f
	}
	err := o.render(ctx, out, rep)
	if file != nil {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("failed to write --out file: %w", cerr)
		}
	}
	if dumpErr != nil {
		dumpErr = fmt.Errorf("--dump: %w", dumpErr)
	}
	return errors.Join(dumpErr, err)
}

func (o *diffOptions) render(ctx context.Context, out io.Writer, rep *report.Report) error {
	switch o.Output {
	case "json":
		return report.WriteJSON(out, rep)
	case "markdown":
		return report.WriteMarkdown(out, rep, report.MarkdownOptions{ShowUnchanged: o.ShowUnchanged})
	}
	opts := report.TextOptions{
		Color:         isTerminal(out) && o.getenv("NO_COLOR") == "",
		ShowUnchanged: o.ShowUnchanged,
	}
	if ext := o.getenv(report.ExternalDiffEnv); ext != "" {
		opts.NoDiffs = true
		opts.AfterObjects = func(w io.Writer) error {
			if rep.Summary.Changes() == 0 {
				return nil
			}
			fmt.Fprintf(w, "\nDiff from %s:\n", report.ExternalDiffEnv)
			return report.RunExternalDiff(ctx, ext, rep, w, o.streams.ErrOut)
		}
	}
	return report.WriteText(out, rep, opts)
}

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

func newProgress(w io.Writer, verb string) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w, verb: verb}
}

func (p *progress) update(done, total int) {
	if p.w == nil {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\rdrift: %s %d/%d objects", p.verb, done, total)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
