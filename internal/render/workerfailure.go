package render

import "github.com/drift-gitops/drift/internal/reason"

// WorkerFailure is why a render worker gave no answer: it ran out of time, memory or
// stack, wrote too much, or the run ended.
type WorkerFailure struct {
	Reason  reason.Reason
	Message string
}

func (f *WorkerFailure) Error() string { return f.Message }
