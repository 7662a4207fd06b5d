package worker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// Targets wait in a queue and render in batches: a worker renders up to maxBatch
// targets of one snapshot one after the other, at most GOMAXPROCS workers at a time,
// and sends each result as soon as it has it (a frame: its length, then its JSON).
// Starting a worker costs more than rendering most targets (a thousand Applications
// of a fleet took a thousand workers, 20 seconds): workers are session workers
// (workSession), kept between batches while they answer in full, up to one per
// processor, so that the renderings a discovery asks for one after the other (a
// Flux Kustomization, then what it holds) do not each start a process; a worker
// opens each snapshot once.
//
// Each target keeps its limits. Drift gives each target the time limit from the
// frame before it, and reads each frame under the output limit; when a target
// overflows or runs out of time, its worker is stopped, that target fails as it
// would alone, and the targets after it render in another batch. When a worker
// crashes (out of memory or stack, a panic), the target it was rendering is
// rendered again alone, so that the failure is its own, and the rest in another
// batch.
const maxBatch = 64

// gather is how long a new drain waits for more targets before its first batch.
const gather = 5 * time.Millisecond

// queued is a target waiting for, or in, a batch.
type queued struct {
	commit string
	spec   render.Spec
	res    *render.Result
	err    error
	done   chan struct{}
}

func (q *queued) finish(res *render.Result, err error) {
	q.res, q.err = res, err
	close(q.done)
}

// batches is the queue of an Pool.
type batches struct {
	mu      sync.Mutex
	queue   []*queued
	running int
}

// Queue renders spec, from the snapshot of commit, in a batch.
func (w *Pool) Queue(commit string, spec render.Spec) (*render.Result, error) {
	q := &queued{commit: commit, spec: spec, done: make(chan struct{})}
	w.batches.mu.Lock()
	w.batches.queue = append(w.batches.queue, q)
	if w.batches.running < runtime.GOMAXPROCS(0) {
		w.batches.running++
		go w.drain()
	}
	w.batches.mu.Unlock()
	<-q.done
	return q.res, q.err
}

// drain renders batches from the queue until it is empty: each the targets of the
// oldest one's snapshot, at most maxBatch and the queue's share of the workers.
func (w *Pool) drain() {
	// Targets are asked for side by side: the first batch waits a moment for the
	// others (a worker takes tens of milliseconds to start).
	time.Sleep(gather)
	for {
		b := &w.batches
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		size := min(maxBatch, max(1, (len(b.queue)+b.running-1)/b.running))
		var batch, rest []*queued
		for _, q := range b.queue {
			if len(batch) < size && q.commit == b.queue[0].commit {
				batch = append(batch, q)
			} else {
				rest = append(rest, q)
			}
		}
		b.queue = rest
		b.mu.Unlock()
		w.runBatch(batch)
	}
}

// runBatch renders a batch in one worker, and what the worker did not finish as
// the package comment says.
func (w *Pool) runBatch(batch []*queued) {
	specs := make([]render.Spec, len(batch))
	for i, q := range batch {
		specs[i] = q.spec
	}
	next, failed, err := w.runFrames(WorkRequest{Root: w.root, Commit: batch[0].commit, Batch: specs, Limits: w.limits}, func(i int, resp WorkResponse) {
		batch[i].finish(responseResult(batch[i].spec, resp))
	})
	switch {
	case next == len(batch):
		return
	case err != nil:
		for _, q := range batch[next:] {
			q.finish(nil, err)
		}
		return
	case failed == nil || failed.Reason == reason.RenderFailed && w.ctx.Err() == nil:
		// A crash: the target it was rendering alone, to be sure it was this one.
		batch[next].finish(w.Render(batch[next].commit, batch[next].spec, nil))
	default:
		// Out of time or output, or the run ended: the target's own failure.
		batch[next].finish(failedResult(batch[next].spec, failed), nil)
	}
	if rest := batch[next+1:]; len(rest) > 0 {
		w.runBatch(rest)
	}
}

// runFrames runs a batch request in a worker and hands each frame's response to
// got, in order; next is how many came. failed says why the worker stopped before
// the end (nil with next short: it crashed or its answer broke off); err is drift's
// own failure to start it.
func (w *Pool) runFrames(r WorkRequest, got func(i int, resp WorkResponse)) (next int, failed *Failure, err error) {
	req, err := EncodeRequest(r)
	if err != nil {
		return 0, nil, err
	}
	s, err := w.sessions.take(w)
	if err != nil {
		return 0, nil, err
	}
	// Each target has the time limit from the frame before it.
	var timedOut, overflowed bool
	var mu sync.Mutex
	deadline := time.AfterFunc(w.limits.Timeout, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		s.kill()
	})
	defer deadline.Stop()
	if err := writeFrame(s.stdin, req); err == nil {
		for next < len(r.Batch) {
			var head [8]byte
			if _, err := io.ReadFull(s.stdout, head[:]); err != nil {
				break
			}
			n := binary.BigEndian.Uint64(head[:])
			if n > uint64(w.limits.OutputBytes+responseSlack) {
				overflowed = true
				break
			}
			data := make([]byte, n)
			if _, err := io.ReadFull(s.stdout, data); err != nil {
				break
			}
			resp, err := DecodeResponse(data)
			if err != nil {
				break
			}
			got(next, resp)
			next++
			deadline.Reset(w.limits.Timeout)
		}
	}
	stopped := deadline.Stop()
	mu.Lock()
	timedOut = timedOut && next < len(r.Batch)
	mu.Unlock()
	if next == len(r.Batch) && !overflowed {
		if stopped {
			w.sessions.put(s)
		} else {
			// Its time limit ended it as its last answer came: not kept.
			s.kill()
			<-s.done
		}
		return next, nil, nil
	}
	// What is left of its answer is not read: the worker ends.
	s.kill()
	<-s.done
	switch {
	case overflowed:
		return next, &Failure{Reason: reason.TooLarge, Message: fmt.Sprintf("the rendering wrote more than %s (--render-max-output): split the target, or raise the limit if this is real",
			render.LimitSize(w.limits.OutputBytes))}, nil
	case w.ctx.Err() != nil:
		return next, &Failure{Reason: reason.RenderFailed, Message: "rendering stopped: the run ended (--timeout, or drift was interrupted)"}, nil
	case timedOut:
		return next, w.timeoutFailure(r.Batch[next].Renderer == render.RendererHelm), nil
	}
	// A crash: the target is rendered again alone, which tells what ended it.
	return next, nil, nil
}

// sessions are the session workers (workSession) an Pool keeps between batches:
// a batch takes an idle one or starts one, and gives it back when the worker
// answered all of it. One that failed (a crash, out of time or output) is ended.
type sessions struct {
	mu   sync.Mutex
	idle []*session
	// closes counts close's calls: a worker Warm started before one is not kept.
	closes int
}

// session is one session worker.
type session struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	stdout    io.Reader
	idleSince time.Time
	// done is closed when the worker has ended.
	done chan struct{}
}

// kill ends the worker.
func (s *session) kill() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
}

// take is an idle worker that has waited less than half of idleExit (so it is
// still there), or a new one.
func (ss *sessions) take(w *Pool) (*session, error) {
	ss.mu.Lock()
	for len(ss.idle) > 0 {
		s := ss.idle[len(ss.idle)-1]
		ss.idle = ss.idle[:len(ss.idle)-1]
		if time.Since(s.idleSince) < idleExit/2 {
			ss.mu.Unlock()
			return s, nil
		}
		_ = s.stdin.Close() // it ends at the end of its input
	}
	ss.mu.Unlock()
	return ss.start(w)
}

// start starts a session worker.
func (ss *sessions) start(w *Pool) (*session, error) {
	cmd, err := w.command(w.ctx, nil)
	if err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Env, sessionEnv+"=1")
	cmd.Stderr = io.Discard // a crashed target is rendered again alone, which reads it
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &session{cmd: cmd, stdin: stdin, stdout: stdout, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// Warm starts a session worker in the background and keeps it idle for the first
// batch, so that a run's first renderings do not wait for a process to start: a
// run calls it once it knows it will render.
func (w *Pool) Warm() {
	ss := &w.sessions
	ss.mu.Lock()
	closes := ss.closes
	ss.mu.Unlock()
	go func() {
		s, err := ss.start(w)
		if err != nil {
			return
		}
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if ss.closes != closes || len(ss.idle) >= runtime.GOMAXPROCS(0) {
			_ = s.stdin.Close() // the pool was closed meanwhile: it ends at once
			return
		}
		s.idleSince = time.Now()
		ss.idle = append(ss.idle, s)
	}()
}

// close ends the idle workers (at the end of their input) and waits for them, so
// that their time is the run's (a process's usage counts the children it waited
// for).
func (ss *sessions) close() {
	ss.mu.Lock()
	idle := ss.idle
	ss.idle = nil
	ss.closes++
	ss.mu.Unlock()
	for _, s := range idle {
		_ = s.stdin.Close()
	}
	for _, s := range idle {
		<-s.done
	}
}

// put keeps a worker that answered all its batch for the next one; beyond one per
// processor it ends.
func (ss *sessions) put(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.idle) >= runtime.GOMAXPROCS(0) {
		_ = s.stdin.Close()
		return
	}
	s.idleSince = time.Now()
	ss.idle = append(ss.idle, s)
}

// timeoutFailure is a target's failure when it ran out of time; templated hints
// that templates may loop.
func (w *Pool) timeoutFailure(templated bool) *Failure {
	hint := ""
	if templated {
		hint = " (a template that loops without end?)"
	}
	return &Failure{Reason: reason.TooLarge, Message: fmt.Sprintf("rendering took longer than %s (--render-timeout) and was stopped%s; raise the limit if this target is real",
		w.limits.Timeout, hint)}
}

// failedResult is the result of a target whose worker gave no answer.
func failedResult(spec render.Spec, failed *Failure) *render.Result {
	// What a rendering that did not finish read is unknown: its inputs are the whole
	// repository, so --base never skips it as unchanged.
	return &render.Result{Failures: []render.Failure{{Source: render.TargetSource(spec), Reason: failed.Reason,
		Message: render.TargetName(spec) + ": " + failed.Message}}, Inputs: render.Inputs{Trees: []string{""}}}
}

// responseResult is the result a worker's response gives a target.
func responseResult(spec render.Spec, resp WorkResponse) (*render.Result, error) {
	switch {
	case resp.Err != "":
		return nil, errors.New(resp.Err)
	case resp.Result == nil:
		return &render.Result{Failures: []render.Failure{{Source: render.TargetSource(spec), Reason: reason.RenderFailed,
			Message: render.TargetName(spec) + ": the render worker answered nothing: this is a bug in drift, please report it"}}, Inputs: render.Inputs{Trees: []string{""}}}, nil
	}
	return resp.Result, nil
}

// writeFrame writes one frame: data's length, then data.
func writeFrame(out io.Writer, data []byte) error {
	var head [8]byte
	binary.BigEndian.PutUint64(head[:], uint64(len(data)))
	if _, err := out.Write(head[:]); err != nil {
		return err
	}
	_, err := out.Write(data)
	return err
}
