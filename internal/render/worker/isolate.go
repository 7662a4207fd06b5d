package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/subprocess"
)

const (
	// responseSlack is what a response may hold beyond the output limit: failures,
	// notes and inputs of a target whose objects were dropped.
	responseSlack = 8 << 20
	// stderrBytes is how much of a worker's stderr is kept: the Go runtime's fatal
	// error comes first.
	stderrBytes = 16 << 10
)

// Pool renders every target in its own render worker (Main), under
// render.Limits, so a target that recurses without end, eats the memory or loops forever
// ends as a failure of that target and never takes drift and its report down.
type Pool struct {
	// ctx ends every worker when the run ends.
	ctx    context.Context
	root   string
	limits render.Limits
	// batches are the targets waiting to render in batches, and sessions the
	// workers that render them (batch.go).
	batches  batches
	sessions sessions
	// workers counts the workers started.
	workers atomic.Int64
}

// New returns a pool of render workers for the repository whose work tree is at
// root (rendercache.Cache's Worker).
// Workers started through it end when ctx does.
func New(ctx context.Context, root string, limits render.Limits) *Pool {
	return &Pool{ctx: ctx, root: root, limits: limits.OrDefaults()}
}

// Close ends the render workers kept between batches and waits for them. A render
// after Close starts a new one.
func (w *Pool) Close() { w.sessions.close() }

// Context is the run's context, which ends every worker.
func (w *Pool) Context() context.Context { return w.ctx }

// Render renders spec from the snapshot of commit ("" for the work tree) in a worker
// of its own; lookup, when not nil, is where the worker's `lookup` reads the cluster.
// The spec's renderer must be known.
func (w *Pool) Render(commit string, spec render.Spec, lookup *LookupEndpoint) (*render.Result, error) {
	resp, failed, err := w.run(WorkRequest{Root: w.root, Commit: commit, Spec: spec, Limits: w.limits, Lookup: lookup},
		render.TargetName(spec), spec.Renderer == render.RendererHelm)
	switch {
	case err != nil:
		return nil, err
	case failed != nil:
		return failedResult(spec, failed), nil
	}
	return responseResult(spec, resp)
}

// Expand expands an ApplicationSet in a worker, under the same limits as a
// rendering: a template that loops, eats the memory or writes without end is a
// *Failure naming it.
func (w *Pool) Expand(commit string, req appset.Request, what string) (*appset.Result, error) {
	resp, failed, err := w.run(WorkRequest{Root: w.root, Commit: commit, AppSet: &req, Limits: w.limits}, what, true)
	switch {
	case err != nil:
		return nil, err
	case failed != nil:
		failed.Message = what + ": " + failed.Message
		return nil, failed
	case resp.Err != "":
		return nil, &Failure{Reason: reason.Refused, Message: what + ": " + resp.Err}
	case resp.AppSet == nil:
		return nil, &Failure{Reason: reason.RenderFailed, Message: what + ": the render worker answered nothing: this is a bug in drift, please report it"}
	}
	return resp.AppSet, nil
}

// run runs one request in a worker. failed says why the worker gave no answer
// (what names the work in messages; templated hints that templates may loop); err
// is drift's own failure to start it.
func (w *Pool) run(r WorkRequest, what string, templated bool) (resp WorkResponse, failed *Failure, err error) {
	req, err := EncodeRequest(r)
	if err != nil {
		return resp, nil, err
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.limits.Timeout)
	defer cancel()
	cmd, err := w.command(ctx, req)
	if err != nil {
		return resp, nil, err
	}
	stdout := &cappedBuffer{max: w.limits.OutputBytes + responseSlack, overflow: cancel}
	stderr := &cappedBuffer{max: stderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	fail := func(why reason.Reason, format string, args ...any) (WorkResponse, *Failure, error) {
		return resp, &Failure{Reason: why, Message: fmt.Sprintf(format, args...)}, nil
	}
	switch {
	case stdout.overflowed:
		return fail(reason.TooLarge, "the rendering wrote more than %s (--render-max-output): split the target, or raise the limit if this is real",
			render.LimitSize(w.limits.OutputBytes))
	case w.ctx.Err() != nil:
		return fail(reason.RenderFailed, "rendering stopped: the run ended (--timeout, or drift was interrupted)")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return resp, w.timeoutFailure(templated), nil
	case runErr != nil:
		why, msg := crashMessage(runErr, cmd.ProcessState, stderr.String(), templated, w.limits)
		return fail(why, "%s", msg)
	}
	if resp, err = DecodeResponse(stdout.Bytes()); err != nil {
		return fail(reason.RenderFailed, "the render worker's answer cannot be read (%v): this is a bug in drift, please report it", err)
	}
	return resp, nil, nil
}

// crashMessage tells what ended a worker, from the Go runtime's words on its stderr
// (never the rendered content: the runtime prints its own messages and stack frames).
func crashMessage(runErr error, state *os.ProcessState, stderr string, templated bool, l render.Limits) (why reason.Reason, msg string) {
	hint := ""
	if templated {
		hint = " (a template that loops, writes or calls itself without end?)"
	}
	switch {
	case strings.Contains(stderr, "stack exceeds") || strings.Contains(stderr, "fatal error: stack overflow"):
		return reason.TooLarge, fmt.Sprintf("recursion deeper than the %s stack limit%s", render.LimitSize(int64(l.StackBytes)), hint)
	case outOfMemory(stderr, state, l.MemoryBytes):
		return reason.TooLarge, fmt.Sprintf("rendering needed more than %s of memory (--render-memory) and was stopped%s; raise the limit if this target is real", render.LimitSize(l.MemoryBytes), hint)
	}
	if sig := subprocess.KilledBy(state); sig != "" {
		return reason.RenderFailed, fmt.Sprintf("the render worker was killed by signal %s (by the system's out-of-memory killer?)", sig)
	}
	line := firstLine(stderr, "fatal error:", "panic:", "drift render worker:")
	if line == "" {
		line = runErr.Error()
	}
	return reason.RenderFailed, "the render worker failed: " + line
}

// outOfMemory tells a worker that ran out of memory: the runtime says so in one of
// several ways (out of memory, cannot allocate memory, failed to create a thread),
// or, when it died before it could, it had used most of its memory.
func outOfMemory(stderr string, state *os.ProcessState, max int64) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to create new OS thread"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return subprocess.MaxRSS(state) >= max/4*3
}

// firstLine is the first line of s that starts with one of prefixes, cut short.
func firstLine(s string, prefixes ...string) string {
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				if len(l) > 300 {
					l = l[:300] + "…"
				}
				return l
			}
		}
	}
	return ""
}

// cappedBuffer keeps at most max bytes. Past that it fails the write, which closes
// the pipe the worker writes to, and calls overflow.
type cappedBuffer struct {
	bytes.Buffer
	max        int64
	overflowed bool
	overflow   func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - int64(b.Len()); int64(len(p)) > room {
		if b.overflow == nil {
			// Keep the start (stderr): drop the rest, without failing the writer.
			if room > 0 {
				b.Buffer.Write(p[:room])
			}
			return len(p), nil
		}
		b.overflowed = true
		b.overflow()
		return 0, errors.New("output limit reached")
	}
	return b.Buffer.Write(p)
}

// command is a render worker reading req, stopped with ctx. The worker reads content
// the pull request's author wrote: it gets none of drift's environment (the GitHub
// token, cloud credentials), only its role, and dies with drift.
func (w *Pool) command(ctx context.Context, req []byte) (*exec.Cmd, error) {
	cmd, err := subprocess.Command(ctx, subprocess.RoleRender)
	if err != nil {
		return nil, err
	}
	w.workers.Add(1)
	cmd.Env = []string{subprocess.Env + "=" + subprocess.RoleRender}
	if dir := os.Getenv("GOCOVERDIR"); dir != "" {
		cmd.Env = append(cmd.Env, "GOCOVERDIR="+dir)
	}
	subprocess.DieWithParent(cmd)
	if req != nil {
		cmd.Stdin = bytes.NewReader(req)
	}
	return cmd, nil
}
