package app

import (
	"fmt"
	"io"
	"slices"

	"github.com/drift-gitops/drift/internal/config"
)

// Report say how the report is judged and shown: the policy, the diffs' context,
// colour, a markdown template and the HTML report.
type Report struct {
	FailOn           []string
	Unified          int
	Color            string
	MarkdownTemplate string
	HTML             string
	HTMLArtifact     string
}

// colorModes are --color's values.
var colorModes = []string{"auto", "always", "never"}

// validate checks the report's flags.
func (r *Report) validate() error {
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

// policy is what the run fails on: configFailOn (drift.yaml's failOn, trusted: from
// the base on a pull request), --fail-on, and --fail-on-deletes.
func (r *Report) policy(configFailOn []string, failOnDeletes bool) []string {
	out := append(append([]string(nil), configFailOn...), r.FailOn...)
	if failOnDeletes {
		out = append(out, "delete")
	}
	return out
}

// color decides whether a text report to w is coloured.
func (r *Report) color(w io.Writer, getenv func(string) string) bool {
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
