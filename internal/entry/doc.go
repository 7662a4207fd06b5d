// Package entry builds a run's report: it turns each dry-run result into its report
// entry (normalized, the target's ignore and mask rules applied, compiled once per
// run, Secrets masked, scrubbed of the run's values, rendered as YAML once per side,
// diffed, its field changes and risks found) in the report's own types. A run's one
// Builder takes results as the preview finishes them (preview.Sink); Build gathers
// every target's entries from it into the report, with the failures, kept objects
// and notes, every message scrubbed.
package entry
