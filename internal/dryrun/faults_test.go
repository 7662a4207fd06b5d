package dryrun

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// fault is what the proxy does with one request: forward it (nil), or answer it itself.
type fault func(w http.ResponseWriter, r *http.Request) bool

// status answers with a Status of code, as the API server answers an error.
func status(code int) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected %d","code":%d}`, code, code)
		return true
	}
}

// throttled answers as API Priority and Fairness rejects a request: 429, a plain text
// body and Retry-After.
func throttled(retryAfter string) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", retryAfter)
		http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
		return true
	}
}

// reset closes the connection without an answer.
func reset(w http.ResponseWriter, r *http.Request) bool {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
	return true
}

func stall(d time.Duration) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
		return false
	}
}

// faultProxy forwards to the test API server, injecting faults into requests for
// ConfigMaps, and counts them, LISTs of ConfigMaps too (as "LIST", without faults).
type faultProxy struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int  // "GET name" -> requests
	log    []string        // "LIST ns" and "PATCH ns", in the order they came
	waits  []time.Duration // what the clients waited between retries, in order
	// inject picks the fault for the n-th request (1-based) of one method and object.
	inject func(method, name string, n int) fault
}

func newFaultProxy(t *testing.T, inject func(method, name string, n int) fault) *faultProxy {
	t.Helper()
	rp, err := testEnv(t).ReverseProxy()
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{counts: map[string]int{}, inject: inject}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns := ""
		if parts := strings.Split(r.URL.Path, "/"); len(parts) > 4 && parts[3] == "namespaces" {
			ns = parts[4]
		}
		if strings.HasSuffix(r.URL.Path, "/configmaps") && r.Method == http.MethodGet {
			p.mu.Lock()
			p.counts["LIST"]++
			p.log = append(p.log, "LIST "+ns)
			p.mu.Unlock()
		}
		if strings.Contains(r.URL.Path, "/configmaps/") && r.Method == http.MethodPatch {
			p.mu.Lock()
			p.log = append(p.log, "PATCH "+ns)
			p.mu.Unlock()
		}
		if i := strings.Index(r.URL.Path, "/configmaps/"); i >= 0 {
			name := r.URL.Path[i+len("/configmaps/"):]
			p.mu.Lock()
			key := r.Method + " " + name
			p.counts[key]++
			n := p.counts[key]
			p.mu.Unlock()
			if f := p.inject(r.Method, name, n); f != nil && f(w, r) {
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *faultProxy) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[key]
}

// clients talk to the proxy; their waits between retries are recorded, not slept.
func (p *faultProxy) clients(t *testing.T) *kube.Clients {
	t.Helper()
	c, err := kube.NewClients(&rest.Config{Host: p.URL}, 4)
	if err != nil {
		t.Fatal(err)
	}
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.waits = append(p.waits, d)
		return ctx.Err()
	}
	return c
}

// total is the count of requests whose key starts with prefix ("GET ": every GET).
func (p *faultProxy) total(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, v := range p.counts {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func (p *faultProxy) waited() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.waits...)
}

func previewOne(t *testing.T, c *kube.Clients, name string, timeout time.Duration) Result {
	t.Helper()
	res := Run(context.Background(), c, []render.Object{{Obj: configMap(name, "v"), Source: "cm.yaml", Doc: 1}},
		Options{Applier: kubectlssa.New(), FieldManager: "drift-test", RequestTimeout: timeout})
	return res[0]
}

func TestTransientFaultsAreRetried(t *testing.T) {
	cases := map[string]fault{
		"429 with Retry-After": throttled("3"),
		"429 without":          status(http.StatusTooManyRequests),
		"503":                  status(http.StatusServiceUnavailable),
		"500":                  status(http.StatusInternalServerError),
		"connection reset":     reset,
	}
	i := 0
	for name, f := range cases {
		i++
		cm := fmt.Sprintf("transient-%d", i)
		t.Run(name, func(t *testing.T) {
			// The first two requests of each kind fail; the third gets through.
			p := newFaultProxy(t, func(method, n string, k int) fault {
				if n == cm && k <= 2 {
					return f
				}
				return nil
			})
			r := previewOne(t, p.clients(t), cm, 10*time.Second)
			if r.Err != nil || r.Merged == nil {
				t.Fatalf("not retried: %+v", r.Err)
			}
			if g, pt := p.count("GET "+cm), p.count("PATCH "+cm); g < 3 || g > 4 || pt != 3 {
				t.Errorf("requests: %d GET, %d PATCH; want 3 of each (a GET not found is read again once)", g, pt)
			}
			// Four failed requests (two GETs, two PATCHes), each waited out once: as
			// the server asks, or with a backoff of 200ms and more. (Go's HTTP client
			// itself sends a GET again at once when a reused connection closes
			// without an answer.)
			waits := p.waited()
			if len(waits) != 4 && (name != "connection reset" || len(waits) < 2) {
				t.Fatalf("waited %v, want 4 waits", waits)
			}
			for _, w := range waits {
				if name == "429 with Retry-After" && w != 3*time.Second {
					t.Errorf("waited %v, want the 3s the server asked for", waits)
				}
				if name != "429 with Retry-After" && (w < 200*time.Millisecond || w > 5*time.Second*3/2) {
					t.Errorf("waited %v, want a backoff between 200ms and 7.5s", waits)
				}
			}
		})
	}
}

func TestPersistentFaultsAreBoundedAndFinalAnswersNotRetried(t *testing.T) {
	cases := []struct {
		name     string
		f        fault
		requests int
		reason   reason.Reason
	}{
		{"503 forever", status(http.StatusServiceUnavailable), kube.MaxAttempts, reason.Unavailable},
		{"429 forever", throttled("1"), kube.MaxAttempts, reason.Unavailable},
		{"429 forever asking for longer than drift waits", throttled("3600"), kube.MaxAttempts, reason.Unavailable},
		{"403", status(http.StatusForbidden), 1, reason.AdmissionDenied},
		{"400", status(http.StatusBadRequest), 1, reason.Invalid},
		{"422", status(http.StatusUnprocessableEntity), 1, reason.Invalid},
	}
	for i, c := range cases {
		cm := fmt.Sprintf("persistent-%d", i)
		t.Run(c.name, func(t *testing.T) {
			p := newFaultProxy(t, func(method, n string, k int) fault {
				if n == cm && method == http.MethodGet {
					return c.f
				}
				return nil
			})
			r := previewOne(t, p.clients(t), cm, 10*time.Second)
			if r.Err == nil || r.Err.Reason != c.reason {
				t.Fatalf("err = %+v, want reason %s", r.Err, c.reason)
			}
			if got := p.count("GET " + cm); got != c.requests {
				t.Errorf("%d GETs, want %d", got, c.requests)
			}
			for _, w := range p.waited() {
				if w > kube.RetryAfterMax {
					t.Errorf("waited %v, more than %v", w, kube.RetryAfterMax)
				}
			}
		})
	}
}

func TestStalledRequestTimesOutAndIsSentAgain(t *testing.T) {
	p := newFaultProxy(t, func(method, n string, k int) fault {
		if n == "stalled" && method == http.MethodPatch && k == 1 {
			return stall(5 * time.Second)
		}
		return nil
	})
	r := previewOne(t, p.clients(t), "stalled", 500*time.Millisecond)
	if r.Err != nil || r.Merged == nil {
		t.Fatalf("err = %+v", r.Err)
	}
	if got := p.count("PATCH stalled"); got != 2 {
		t.Errorf("%d PATCHes, want 2", got)
	}
	// Stalling every time: bounded, then a timeout error.
	q := newFaultProxy(t, func(method, n string, k int) fault {
		if n == "stuck" && method == http.MethodPatch {
			return stall(5 * time.Second)
		}
		return nil
	})
	r = previewOne(t, q.clients(t), "stuck", 300*time.Millisecond)
	if r.Err == nil || r.Err.Reason != reason.Timeout {
		t.Fatalf("err = %+v", r.Err)
	}
	if got := q.count("PATCH stuck"); got != kube.TimeoutRetries+1 {
		t.Errorf("%d PATCHes, want %d", got, kube.TimeoutRetries+1)
	}
}

// TestServerGoneMidRun: after a few objects the proxy starts dropping every
// connection. Every object still gets a result, done or error.
func TestServerGoneMidRun(t *testing.T) {
	var mu sync.Mutex
	served := 0
	p := newFaultProxy(t, func(method, n string, k int) fault {
		mu.Lock()
		defer mu.Unlock()
		served++
		if served > 10 {
			return reset
		}
		return nil
	})
	var objs []render.Object
	for i := 0; i < 20; i++ {
		objs = append(objs, render.Object{Obj: configMap(fmt.Sprintf("gone-%d", i), "v"), Source: "cm.yaml", Doc: i + 1})
	}
	results := Run(context.Background(), p.clients(t), objs, Options{Applier: kubectlssa.New(), FieldManager: "drift-test", Concurrency: 2, RequestTimeout: 5 * time.Second})
	done, failed := 0, 0
	for _, r := range results {
		switch {
		case r.Err != nil:
			failed++
			if r.Err.Reason != reason.Unavailable {
				t.Errorf("%s: reason %s: %s", r.ID.Name, r.Err.Reason, r.Err.Message)
			}
		case r.Merged != nil:
			done++
		default:
			t.Errorf("%s has neither a result nor an error", r.ID.Name)
		}
	}
	if done == 0 || failed == 0 || done+failed != len(objs) {
		t.Errorf("done %d, failed %d of %d", done, failed, len(objs))
	}
	// Once kube.DownAfter requests in a row found no server, the rest were sent once: only
	// those and the ones already in flight (two workers) waited out retries, and one
	// more: the other worker's last answered request may arrive after a failure has
	// been counted, and an answer starts the count again.
	if waits, most := len(p.waited()), (kube.DownAfter+2+1)*(kube.MaxAttempts-1); waits > most {
		t.Errorf("%d waits between retries: the dead server was not given up on (at most %d)", waits, most)
	}
}

// TestPermanentInternalErrorsAreNotRetried: the API server answers 500 when
// server-side apply cannot type an object against its schema (a number where a
// string goes); the same request always gets it, so it is sent once.
func TestPermanentInternalErrorsAreNotRetried(t *testing.T) {
	p := newFaultProxy(t, func(string, string, int) fault { return nil })
	obj := configMap("typed-500", "v")
	obj.Object["data"] = map[string]any{"n": int64(98765)}
	res := Run(context.Background(), p.clients(t), []render.Object{{Obj: obj, Source: "cm.yaml", Doc: 1}},
		Options{Applier: kubectlssa.New(), FieldManager: "drift-test", RequestTimeout: 10 * time.Second})
	if res[0].Err == nil || res[0].Err.Reason != reason.Invalid {
		t.Fatalf("err = %+v, want invalid", res[0].Err)
	}
	if got := p.count("PATCH typed-500"); got != 1 {
		t.Errorf("%d PATCHes, want 1", got)
	}
}
