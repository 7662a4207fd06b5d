// Package entry turns one dry-run result into its report entry: normalized, the
// target's ignore and mask rules applied (compiled once per run), Secrets masked,
// scrubbed of the run's values, rendered as YAML once per side, diffed, its field
// changes and risks found. A run's one Builder takes results as the preview finishes
// them (preview.Sink) and gives report.Build every target's entries.
package entry
