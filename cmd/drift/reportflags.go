package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/report"
)

// reportFlags say how the report is judged and shown: the policy, the diffs' context,
// colour, a markdown template and the HTML report.
type reportFlags struct {
	FailOn           []string
	Unified          int
	Color            string
	MarkdownTemplate string
	HTML             string
	HTMLArtifact     string
	// configFailOn is drift.yaml's failOn (trusted: from the base on a pull request).
	configFailOn []string
}

// colorModes are --color's values.
var colorModes = []string{"auto", "always", "never"}

// addFlags registers the report's flags; diffs says whether the command computes
// diffs (-U means nothing to drift report merge, which reads them).
func (r *reportFlags) addFlags(f *pflag.FlagSet, diffs bool) {
	f.StringSliceVar(&r.FailOn, "fail-on", nil, "policy: exit 3 and fail the check when the report has any of "+strings.Join(config.FailOnValues, ", ")+" (comma-separated; adds to drift.yaml's failOn)")
	f.StringVar(&r.Color, "color", "auto", "colour the text report: auto (a terminal, unless NO_COLOR is set or FORCE_COLOR asks for it), always or never")
	f.StringVar(&r.MarkdownTemplate, "markdown-template", "", "lay the markdown report and the pull request comment out with this Go text/template file, over the built-in one (docs/report.md#templates)")
	f.StringVar(&r.HTML, "html", "", "also write the report as one self-contained HTML page to this file")
	f.StringVar(&r.HTMLArtifact, "html-artifact", "", "with --html and --github-comment: the name of the workflow artifact the page is uploaded as, which the comment points to (the Action sets it)")
	if diffs {
		f.IntVarP(&r.Unified, "unified", "U", report.DefaultContext, "lines of context in each diff")
	}
}

// validate checks the report's flags.
func (r *reportFlags) validate() error {
	if err := config.CheckFailOn(r.FailOn); err != nil {
		return fmt.Errorf("--fail-on: %w", err)
	}
	if !slices.Contains(colorModes, r.Color) {
		return fmt.Errorf("unknown --color %q: use auto, always or never", r.Color)
	}
	if r.Unified < 0 {
		return fmt.Errorf("-U must not be negative, got %d", r.Unified)
	}
	return nil
}

// policy is what the run fails on: drift.yaml's failOn, --fail-on, and --fail-on-deletes.
func (r *reportFlags) policy(failOnDeletes bool) []string {
	out := append(append([]string(nil), r.configFailOn...), r.FailOn...)
	if failOnDeletes {
		out = append(out, "delete")
	}
	return out
}

// color decides whether a text report to w is coloured.
func (r *reportFlags) color(w io.Writer, getenv func(string) string) bool {
	switch r.Color {
	case "always":
		return true
	case "never":
		return false
	}
	if getenv("NO_COLOR") != "" {
		return false
	}
	if v := getenv("FORCE_COLOR"); v != "" && v != "0" && v != "false" {
		return true
	}
	return isTerminal(w)
}
