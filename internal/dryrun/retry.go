package dryrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Retry policy for transient faults. Every request drift sends is idempotent: GETs,
// and server-side apply PATCHes (dry-run, or the ephemeral server's seeding, which
// applies the same object again).
const (
	maxAttempts   = 4                      // per request, the first included
	backoffBase   = 200 * time.Millisecond // doubled after each attempt, ±50% jitter
	backoffMax    = 5 * time.Second
	retryAfterMax = 30 * time.Second // a longer Retry-After is not waited for
)

// retryTransport retries a request the server could not serve for now: 429 (API
// Priority and Fairness; Retry-After honoured), 500/502/503/504, and connections
// refused, reset or closed. Other answers (400, 403, 404, 409, 422) are final. After
// the last attempt the answer is returned without its Retry-After header, so that
// client-go does not retry it again.
//
// When requests keep failing at the connection level (the API server went away), the
// transport stops retrying after a few such requests, so that the rest of the run fails
// fast instead of waiting out backoffs object by object; one answer resets it.
type retryTransport struct {
	next http.RoundTripper
	// sleep waits, or returns early when ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// down counts requests in a row that failed at the connection level after retries.
	down atomic.Int32
}

// downAfter is how many requests in a row must fail that way before retries stop.
const downAfter = 3

// unreachableError is a connection-level failure after retries. Its text avoids the
// phrases client-go would retry on again ("EOF", "connection reset by peer").
type unreachableError struct {
	attempts int
	refused  bool
}

func (e *unreachableError) Error() string {
	what := "closed the connection without an answer"
	if e.refused {
		what = "refused the connection"
	}
	return fmt.Sprintf("the API server %s (%d attempts)", what, e.attempts)
}

func newRetryTransport(next http.RoundTripper) http.RoundTripper {
	return &retryTransport{next: next, sleep: sleepCtx}
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !idempotent(req) {
		return t.next.RoundTrip(req)
	}
	attempts := maxAttempts
	if t.down.Load() >= downAfter {
		attempts = 1
	}
	for attempt := 1; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		wait, retriable := retryable(resp, err)
		if err == nil {
			t.down.Store(0)
		}
		if !retriable || attempt >= attempts || req.Context().Err() != nil {
			if resp != nil {
				resp.Header.Del("Retry-After")
			}
			if err != nil && retriable {
				t.down.Add(1)
				return nil, &unreachableError{attempts: attempt, refused: errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused")}
			}
			return resp, err
		}
		if wait == 0 {
			wait = backoff(attempt)
		}
		if deadline, ok := req.Context().Deadline(); ok && time.Until(deadline) < wait {
			if resp != nil {
				resp.Header.Del("Retry-After")
			}
			return resp, err // no time left to wait: report what the server said
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		if req.Body != nil && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// idempotent reports requests that may be sent again.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPatch:
		return req.GetBody != nil || req.Body == nil
	}
	return false
}

// retryable says whether an answer is transient, and how long the server asked to wait.
func retryable(resp *http.Response, err error) (time.Duration, bool) {
	if err != nil {
		return 0, transientNetError(err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return retryAfter(resp), true
	case http.StatusInternalServerError:
		if permanentInternal(resp) {
			return 0, false
		}
		return retryAfter(resp), true
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return retryAfter(resp), true
	}
	return 0, false
}

// permanentMessages are 500 answers that the same request always gets: server-side
// apply could not type the object against its schema (a number where a string goes).
// Sending it again only delays the error.
var permanentMessages = [][]byte{[]byte("failed to create typed patch object"), []byte("failed to create typed live object")}

// permanentInternal reports a 500 whose message is one of permanentMessages. It reads
// the start of the body and puts it back.
func permanentInternal(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	for _, m := range permanentMessages {
		if bytes.Contains(head, m) {
			return true
		}
	}
	return false
}

func retryAfter(resp *http.Response) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if err != nil || s < 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, retryAfterMax)
}

func transientNetError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "EOF")
}

func backoff(attempt int) time.Duration {
	d := min(backoffBase<<(attempt-1), backoffMax)
	return d/2 + rand.N(d) // d ± 50%
}

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
