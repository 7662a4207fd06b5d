// Package worker renders targets out of drift's process: each in a render worker
// (drift executed again, internal/subprocess) under render.Limits, so that a target
// that recurses without end, eats the memory or loops forever ends as a failure of
// that target and never takes drift and its report down. Pool is the parent's side:
// starting workers, batching the targets waiting (batch.go) and reading how a
// worker ended (isolate.go); Main is the worker's (worker.go). Requests and answers
// cross in the worker's wire format (wire.go: EncodeRequest, EncodeResponse), which
// the rendering store keeps too; a worker that gave no answer is a Failure.
package worker
