// Package report is a run's report: the drift.report/v1 model every writer renders
// (internal/report/write), built from the targets' entries (Build, over the run's one
// Builder, entry.Builder, which scrubs every message of every value the run's
// scrubber knows), judged by a policy, written as and read back from JSON, and merged
// from the shards of a run split across runners.
package report
