package worker

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
	"github.com/drift-gitops/drift/internal/subprocess"
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

// Main is the render worker's main: drift executed again (internal/subprocess)
// to render one target under limits. What no Go program survives — a stack overflow,
// running out of memory — then ends the worker, and drift reports that target as a
// failure and goes on with the others. The request comes on stdin, the response goes
// to stdout; stderr is for the Go runtime's own last words, which drift reads to tell
// what happened.
func Main(stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv(sessionEnv) != "" {
		return workSession(stdin, stdout, stderr)
	}
	req, err := DecodeRequest(io.LimitReader(stdin, maxRequestBytes))
	if err != nil {
		fmt.Fprintf(stderr, "drift render worker: cannot read the request: %v\n", err)
		return 2
	}
	limits := req.Limits.OrDefaults()
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
// the heap is collected hard before the OS says no. Below that limit the collector
// runs when the heap has grown by workerGCPercent.
func applyLimits(l render.Limits) error {
	debug.SetMaxStack(l.StackBytes)
	debug.SetMemoryLimit(l.MemoryBytes / 4 * 3)
	debug.SetGCPercent(workerGCPercent)
	return subprocess.LimitMemory(l.MemoryBytes)
}

// workerGCPercent is a render worker's GOGC. A worker's heap is mostly the garbage
// of renderings it has sent: collected half as often as Go's default (100), `drift
// targets` over make bench's fleet from an empty cache took 0.91x the wall time and
// 0.89x the CPU, and its largest worker 15 MiB more (114 MiB).
const workerGCPercent = 200

// sessionEnv, set in a worker's environment, makes it a session worker
// (workSession).
const sessionEnv = "DRIFT_RENDER_SESSION"

// idleExit is how long a session worker waits for its next batch before it ends.
// drift hands a worker a new batch only while it has been idle for less than half
// of it (sessions.take).
const idleExit = 10 * time.Second

// workSession is a worker that renders batch after batch: each request comes as a
// frame (its length, then the request), each answer as the frames of workBatch. It
// starts once for many batches (a process start costs more than most renderings,
// and batches of a discovery come one after the other), and opens each snapshot
// once. It ends at the end of its input, or when it waited idleExit for a request.
// The time limit is each rendering's, as in a batch; limits are set by the first
// request and hold for the worker's life.
func workSession(stdin io.Reader, stdout, stderr io.Writer) int {
	requests := make(chan []byte)
	failed := make(chan error, 1)
	go func() {
		defer close(requests)
		for {
			var head [8]byte
			if _, err := io.ReadFull(stdin, head[:]); err != nil {
				if err != io.EOF {
					failed <- err
				}
				return
			}
			n := binary.BigEndian.Uint64(head[:])
			if n > maxRequestBytes {
				failed <- fmt.Errorf("a request of %d bytes", n)
				return
			}
			data := make([]byte, n)
			if _, err := io.ReadFull(stdin, data); err != nil {
				failed <- err
				return
			}
			requests <- data
		}
	}()
	snaps := map[string]*snapshotOrFailure{}
	var orphaned *time.Timer
	var limits render.Limits
	for {
		var data []byte
		var ok bool
		select {
		case data, ok = <-requests:
		case <-time.After(idleExit):
			return 0
		}
		if !ok {
			select {
			case err := <-failed:
				fmt.Fprintf(stderr, "drift render worker: cannot read the request: %v\n", err)
				return 2
			default:
				return 0
			}
		}
		req, err := DecodeRequest(bytes.NewReader(data))
		if err != nil {
			fmt.Fprintf(stderr, "drift render worker: cannot read the request: %v\n", err)
			return 2
		}
		if orphaned == nil {
			limits = req.Limits.OrDefaults()
			if err := applyLimits(limits); err != nil {
				fmt.Fprintf(stderr, "drift render worker: cannot set its limits: %v\n", err)
				return 2
			}
			orphaned = time.AfterFunc(limits.Timeout+orphanGrace, func() {
				fmt.Fprintln(stderr, "drift render worker: time limit reached, ending")
				os.Exit(exitOrphaned)
			})
		}
		key := req.Root + "\x00" + req.Commit
		if snaps[key] == nil {
			snap, failure := openSnapshot(req)
			snaps[key] = &snapshotOrFailure{snap, failure}
		}
		orphaned.Reset(limits.Timeout + orphanGrace)
		if code := renderBatch(req, snaps[key].snap, snaps[key].failure, limits, stdout, stderr, func() { orphaned.Reset(limits.Timeout + orphanGrace) }); code != 0 {
			return code
		}
		// Waiting for the next batch: drift ends an idle worker by closing its input,
		// and the kernel ends it with drift.
		orphaned.Stop()
	}
}

// snapshotOrFailure is a session worker's opened snapshot, or why it cannot be.
type snapshotOrFailure struct {
	snap    *source.Snapshot
	failure *render.Result
}

// workBatch renders each spec of a batch, writing a frame as each is done; started
// restarts the time limit for the next one.
func workBatch(req WorkRequest, limits render.Limits, stdout, stderr io.Writer, started func()) int {
	snap, failure := openSnapshot(req)
	return renderBatch(req, snap, failure, limits, stdout, stderr, started)
}

// renderBatch is workBatch with the snapshot opened (or failure saying why not).
func renderBatch(req WorkRequest, snap *source.Snapshot, failure *render.Result, limits render.Limits, stdout, stderr io.Writer, started func()) int {
	for _, spec := range req.Batch {
		started()
		resp := WorkResponse{Result: failure}
		if failure == nil {
			if res, err := render.RenderWith(snap.FS, spec, limits, nil); err != nil {
				resp = WorkResponse{Err: err.Error()}
			} else {
				resp = WorkResponse{Result: res}
			}
		} else {
			resp.Result = &render.Result{Failures: []render.Failure{{Source: render.TargetSource(spec), Reason: failure.Failures[0].Reason, Message: failure.Failures[0].Message}}}
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
func openSnapshot(req WorkRequest) (*source.Snapshot, *render.Result) {
	failed := func(format string, args ...any) *render.Result {
		return &render.Result{Failures: []render.Failure{{Source: render.TargetSource(req.Spec), Reason: reason.RenderFailed, Message: fmt.Sprintf(format, args...)}}}
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
func work(req WorkRequest, limits render.Limits) WorkResponse {
	snap, failure := openSnapshot(req)
	if failure != nil {
		return WorkResponse{Result: failure}
	}
	if req.AppSet != nil {
		// The time limit is drift's to enforce (it kills the worker); the context
		// is for the expansion's own loops.
		res, err := appset.Generate(context.Background(), snap.FS, *req.AppSet)
		if err != nil {
			return WorkResponse{Err: err.Error()}
		}
		return WorkResponse{AppSet: res}
	}
	res, err := render.RenderWith(snap.FS, req.Spec, limits, req.Lookup.Config())
	if err != nil {
		return WorkResponse{Err: err.Error()}
	}
	return WorkResponse{Result: res}
}

// encodeLimited encodes a response, and when the encoded objects exceed max, sends
// the failures, notes and inputs without the objects, with a too-large failure.
func encodeLimited(resp WorkResponse, spec render.Spec, max int64) ([]byte, error) {
	data, err := EncodeResponse(resp)
	if err != nil || int64(len(data)) <= max || resp.Result == nil {
		return data, err
	}
	res := *resp.Result
	res.Objects = nil
	res.Failures = append(append([]render.Failure{}, res.Failures...), render.Failure{Source: render.TargetSource(spec), Reason: reason.TooLarge,
		Message: fmt.Sprintf("%s renders %d objects taking %s, over the %s limit per target (--render-max-output): split the target, or raise the limit if this is real",
			render.TargetName(spec), len(resp.Result.Objects), render.SizeOf(int64(len(data))), render.LimitSize(max))})
	return EncodeResponse(WorkResponse{Result: &res, Err: resp.Err})
}

// Serve runs this process as a render worker, and exits, when it was started as one
// (subprocess.RoleRender); otherwise it returns. A test binary whose tests render
// through a Pool calls it first in its TestMain: the Pool re-executes the running
// binary, which is that test binary under go test.
func Serve() {
	if subprocess.Role() == subprocess.RoleRender {
		os.Exit(Main(os.Stdin, os.Stdout, os.Stderr))
	}
}
