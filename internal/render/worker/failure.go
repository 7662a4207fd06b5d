package worker

import "github.com/drift-gitops/drift/internal/reason"

// Failure is why a render worker gave no answer: it ran out of time, memory or
// stack, wrote too much, or the run ended.
type Failure struct {
	Reason  reason.Reason
	Message string
}

func (f *Failure) Error() string { return f.Message }
