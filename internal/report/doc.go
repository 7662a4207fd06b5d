// Package report is a run's report: the drift.report/v1 model every writer renders,
// built from the targets' entries (Build, over the run's one Builder, entry.Builder,
// which scrubs every message of every value the run's scrubber knows), judged by a
// policy, read back from JSON, and merged from the shards of a run split across
// runners. It also writes the report as text, markdown or JSON.
package report
