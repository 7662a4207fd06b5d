package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// The retry policy. Every request drift sends is idempotent: reads, and dry-run (or,
// on an ephemeral server, repeated) applies and creates. It is applied in one place,
// Retry, around each request at its call site:
//   - an answer the server may give differently next time (429 from API Priority and
//     Fairness, 500, 502, 503, 504) or a connection refused, reset or closed is sent
//     again, up to MaxAttempts in all, after the wait the server asked for
//     (Retry-After, as client-go reads it into the Status) or else a jittered
//     exponential backoff;
//   - a request that ran out of --request-timeout is sent again at once with a fresh
//     timeout, up to TimeoutRetries more times;
//   - every other answer (400, 403, 404, 409, 422, and the 500 of an object that does
//     not fit its schema or cannot be converted to its type) is final.
//
// client-go's own retry of answers with Retry-After is turned off for these requests
// (see noClientRetries): it would wait on a clock tests cannot replace, outside the
// bound above and the short cut for a server that went away.
const (
	// MaxAttempts bounds the sends of one request, the first included.
	MaxAttempts = 4
	// TimeoutRetries is how often a request that timed out is sent again.
	TimeoutRetries = 2
	// RetryAfterMax is the longest Retry-After waited for: a longer one is not.
	RetryAfterMax = 30 * time.Second
	// DownAfter is how many requests in a row must fail to connect, after their
	// retries, before the rest of the run stops retrying: the API server went away,
	// and every remaining object should fail fast instead of waiting out backoffs.
	DownAfter = 3
)

// backoff is the wait between attempts: 200ms, doubled each time up to 5s, plus up
// to half as much again at random.
var backoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: MaxAttempts, Cap: 5 * time.Second}

// Retry sends a request with send until it is answered, its answer is final, or the
// policy above gives up; it returns the last answer. send gets the context to send
// with.
func Retry[T any](ctx context.Context, c *Clients, send func(context.Context) (T, error)) (T, error) {
	attempts := MaxAttempts
	if c.down.Load() >= DownAfter {
		attempts = 1
	}
	b := backoff
	timeouts := 0
	for attempt := 1; ; attempt++ {
		v, err := send(ctx)
		switch {
		case err == nil:
			c.down.Store(0)
			return v, nil
		case ctx.Err() != nil:
			return v, err
		case isTimeout(err):
			if timeouts++; timeouts > TimeoutRetries {
				return v, err
			}
			continue
		case !transient(err):
			return v, err
		case attempt >= attempts:
			if isConnection(err) {
				c.down.Add(1)
				err = fmt.Errorf("%w (%d attempts)", err, attempt)
			}
			return v, err
		}
		wait := b.Step()
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			wait = min(time.Duration(s)*time.Second, RetryAfterMax)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return v, err // no time left to wait: report what the server said
		}
		if c.Sleep(ctx, wait) != nil {
			return v, err
		}
	}
}

// transient reports an answer that the same request may not get next time.
func transient(err error) bool {
	if isConnection(err) {
		return true
	}
	switch apiStatus(err).Code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusInternalServerError:
		return !untypable(err) && !unconvertible(err)
	}
	return false
}

// isConnection reports a request that got no answer: the connection was refused,
// reset or closed.
func isConnection(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var op *net.OpError
	return errors.As(err, &op) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// sleepCtx waits d, or less when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// noClientRetries builds every request of a client with client-go's own retries
// turned off: Retry applies the one policy.
type noClientRetries struct{ rest.Interface }

func (n noClientRetries) Verb(verb string) *rest.Request { return n.Interface.Verb(verb).MaxRetries(0) }
func (n noClientRetries) Post() *rest.Request            { return n.Interface.Post().MaxRetries(0) }
func (n noClientRetries) Put() *rest.Request             { return n.Interface.Put().MaxRetries(0) }
func (n noClientRetries) Get() *rest.Request             { return n.Interface.Get().MaxRetries(0) }
func (n noClientRetries) Delete() *rest.Request          { return n.Interface.Delete().MaxRetries(0) }
func (n noClientRetries) Patch(pt types.PatchType) *rest.Request {
	return n.Interface.Patch(pt).MaxRetries(0)
}
