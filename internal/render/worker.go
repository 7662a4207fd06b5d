package render

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/source"
)

const (
	// maxRequestBytes bounds what a worker reads from drift: a spec and its values.
	maxRequestBytes = 64 << 20
	// orphanGrace is how long past its time limit a worker whose drift is gone (and
	// so cannot kill it) keeps running before it ends itself.
	orphanGrace = 30 * time.Second
	// exitOrphaned is a worker's exit code when it ended itself at its time limit.
	exitOrphaned = 3
)

// WorkerMain is the render worker's main: drift executed again (internal/subprocess)
// to render one target under limits. What no Go program survives — a stack overflow,
// running out of memory — then ends the worker, and drift reports that target as a
// failure and goes on with the others. The request comes on stdin, the response goes
// to stdout; stderr is for the Go runtime's own last words, which drift reads to tell
// what happened.
func WorkerMain(stdin io.Reader, stdout, stderr io.Writer) int {
	req, err := decodeRequest(io.LimitReader(stdin, maxRequestBytes))
	if err != nil {
		fmt.Fprintf(stderr, "drift render worker: cannot read the request: %v\n", err)
		return 2
	}
	limits := req.Limits.orDefaults()
	if err := applyLimits(limits); err != nil {
		fmt.Fprintf(stderr, "drift render worker: cannot set its limits: %v\n", err)
		return 2
	}
	// drift kills a worker at its time limit; this is for a worker that outlived drift.
	orphaned := time.AfterFunc(limits.Timeout+orphanGrace, func() {
		fmt.Fprintln(stderr, "drift render worker: time limit reached, ending")
		os.Exit(exitOrphaned)
	})
	if len(req.Batch) > 0 {
		return workBatch(req, limits, stdout, stderr, func() { orphaned.Reset(limits.Timeout + orphanGrace) })
	}
	data, err := encodeLimited(work(req, limits), req.Spec, limits.OutputBytes)
	if err != nil {
		fmt.Fprintf(stderr, "drift render worker: cannot encode the result: %v\n", err)
		return 2
	}
	if _, err := stdout.Write(data); err != nil {
		fmt.Fprintf(stderr, "drift render worker: cannot write the result: %v\n", err)
		return 2
	}
	return 0
}

// applyLimits bounds this process: a small maximum stack so that unbounded recursion
// dies at once (Go's default is 1 GB, and a stack that size is copied as it grows);
// a hard memory limit from the OS, with the garbage collector's soft limit below it so
// the heap is collected hard before the OS says no.
func applyLimits(l Limits) error {
	debug.SetMaxStack(l.StackBytes)
	debug.SetMemoryLimit(l.MemoryBytes / 4 * 3)
	return limitMemory(l.MemoryBytes)
}

// workBatch renders each spec of a batch, writing a frame as each is done; started
// restarts the time limit for the next one.
func workBatch(req workRequest, limits Limits, stdout, stderr io.Writer, started func()) int {
	snap, failure := openSnapshot(req)
	for _, spec := range req.Batch {
		started()
		resp := workResponse{Result: failure}
		if failure == nil {
			if res, err := renderWith(snap.FS, spec, limits, nil); err != nil {
				resp = workResponse{Err: err.Error()}
			} else {
				resp = workResponse{Result: res}
			}
		} else {
			resp.Result = &Result{Failures: []Failure{{Source: targetSource(spec), Reason: failure.Failures[0].Reason, Message: failure.Failures[0].Message}}}
		}
		data, err := encodeLimited(resp, spec, limits.OutputBytes)
		if err == nil {
			err = writeFrame(stdout, data)
		}
		if err != nil {
			fmt.Fprintf(stderr, "drift render worker: cannot write the result: %v\n", err)
			return 2
		}
	}
	return 0
}

// openSnapshot opens the request's snapshot; the failure says why it cannot.
func openSnapshot(req workRequest) (*source.Snapshot, *Result) {
	failed := func(format string, args ...any) *Result {
		return &Result{Failures: []Failure{{Source: targetSource(req.Spec), Reason: reason.RenderFailed, Message: fmt.Sprintf(format, args...)}}}
	}
	repo, err := source.Open(req.Root)
	if err != nil {
		return nil, failed("the render worker cannot open the repository: %v", err)
	}
	snap, err := repo.Snapshot(req.Commit)
	if err != nil {
		return nil, failed("the render worker cannot read the snapshot: %v", err)
	}
	return snap, nil
}

// work opens the snapshot and renders the spec.
func work(req workRequest, limits Limits) workResponse {
	snap, failure := openSnapshot(req)
	if failure != nil {
		return workResponse{Result: failure}
	}
	if req.AppSet != nil {
		// The time limit is drift's to enforce (it kills the worker); the context
		// is for the expansion's own loops.
		res, err := appset.Generate(context.Background(), snap.FS, *req.AppSet)
		if err != nil {
			return workResponse{Err: err.Error()}
		}
		return workResponse{AppSet: res}
	}
	res, err := renderWith(snap.FS, req.Spec, limits, req.Lookup.config())
	if err != nil {
		return workResponse{Err: err.Error()}
	}
	return workResponse{Result: res}
}

// encodeLimited encodes a response, and when the encoded objects exceed max, sends
// the failures, notes and inputs without the objects, with a too-large failure.
func encodeLimited(resp workResponse, spec Spec, max int64) ([]byte, error) {
	data, err := encodeResponse(resp)
	if err != nil || int64(len(data)) <= max || resp.Result == nil {
		return data, err
	}
	res := *resp.Result
	res.Objects = nil
	res.Failures = append(append([]Failure{}, res.Failures...), Failure{Source: targetSource(spec), Reason: reason.TooLarge,
		Message: fmt.Sprintf("%s renders %d objects taking %s, over the %s limit per target (--render-max-output): split the target, or raise the limit if this is real",
			targetName(spec), len(resp.Result.Objects), sizeOf(int64(len(data))), limitSize(max))})
	return encodeResponse(workResponse{Result: &res, Err: resp.Err})
}
