// Package report is a run's report: the drift.report/v1 model every writer renders
// (internal/report/write), with types of its own for what the engine fills in, what
// it derives from its targets (Settle), the policy's outcome, and its JSON written
// and read back. It imports no engine package: internal/entry builds a report,
// internal/policy judges one, internal/shard merges shards' reports.
package report
