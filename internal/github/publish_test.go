package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/github/githubtest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

const token = "ghs_secret-token-value"

// publisher is a client of srv whose rate-limit waits fail the test: only
// TestRateLimitsAreWaitedOutAndBounded expects any, and no test waits for real.
func publisher(t *testing.T, srv *githubtest.Server) *Publisher {
	t.Helper()
	return publisherWaiting(t, srv, func(_ context.Context, d time.Duration) error {
		t.Errorf("unexpected rate-limit wait of %s", d)
		return nil
	})
}

func publisherWaiting(t *testing.T, srv *githubtest.Server, wait func(context.Context, time.Duration) error) *Publisher {
	t.Helper()
	p, err := newPublisher(Context{Token: token, Repository: "acme/gitops", APIURL: srv.URL, PR: 7, HeadSHA: "0123456789abcdef0123456789abcdef01234567"}, nil, wait)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommentIsCreatedUpdatedAndRecreated(t *testing.T) {
	srv := githubtest.New(token)
	defer srv.Close()
	for i := 0; i < 150; i++ { // a busy pull request: the comment list is paged
		srv.AddComment(7, fmt.Sprintf("review comment %d", i))
	}
	other := Marker([]string{"other-target"})
	srv.AddComment(7, other+"\nan older drift report for other targets")
	p := publisher(t, srv)
	marker := Marker([]string{"web", "api"})
	if marker != Marker([]string{"api", "web"}) {
		t.Fatal("the marker depends on the order of targets")
	}
	ctx := context.Background()
	if got, err := p.Comment(ctx, marker, "first"); err != nil || got != "created" {
		t.Fatalf("%s %v", got, err)
	}
	if got, err := p.Comment(ctx, marker, "second"); err != nil || got != "updated" {
		t.Fatalf("%s %v", got, err)
	}
	mine := func() []githubtest.Comment {
		var out []githubtest.Comment
		for _, c := range srv.Comments(7) {
			if strings.HasPrefix(c.Body, marker) {
				out = append(out, c)
			}
		}
		return out
	}
	if m := mine(); len(m) != 1 || m[0].Body != marker+"\nsecond" {
		t.Fatalf("comments = %+v", m)
	}
	srv.DeleteComment(mine()[0].ID)
	if got, err := p.Comment(ctx, marker, "third"); err != nil || got != "created" || len(mine()) != 1 {
		t.Fatalf("after deletion: %s %v %d", got, err, len(mine()))
	}
	kept := false
	for _, c := range srv.Comments(7) {
		kept = kept || c.Body == other+"\nan older drift report for other targets"
	}
	if !kept {
		t.Error("the other target set's comment was touched")
	}
}

// TestRateLimitsAreWaitedOutAndBounded: a primary rate limit is waited out until its
// reset, a secondary one for its Retry-After; a limit on every request gives up after
// forge.MaxTries; a wait longer than forge.MaxWait is not waited at all. The waits are recorded,
// not slept.
func TestRateLimitsAreWaitedOutAndBounded(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(token)
	defer srv.Close()
	reset := time.Now().Add(30 * time.Second)
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		switch n {
		case 1: // primary rate limit, reset in 30 seconds
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", fmt.Sprint(reset.Unix()))
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"API rate limit exceeded"}`)
			return true
		case 2: // secondary rate limit
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"You have exceeded a secondary rate limit"}`)
			return true
		}
		return false
	}
	var waits []time.Duration
	p := publisherWaiting(t, srv, func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	})
	if _, err := p.Comment(context.Background(), Marker(nil), "body"); err != nil {
		t.Fatal(err)
	}
	if len(srv.Comments(7)) != 1 {
		t.Fatal("no comment after the rate limits")
	}
	// Until the reset (whole seconds, plus one), then the Retry-After.
	if len(waits) != 2 || waits[0] < 28*time.Second || waits[0] > 32*time.Second || waits[1] != 7*time.Second {
		t.Fatalf("waits = %v, want ~31s then 7s", waits)
	}

	// Limited on every request: a bounded number of tries, then an error.
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"message":"slow down"}`)
		return true
	}
	waits, before := nil, len(srv.Requests)
	if _, err := p.Comment(context.Background(), Marker(nil), "body"); err == nil {
		t.Fatal("no error")
	}
	if n := len(srv.Requests) - before; n != forge.MaxTries || len(waits) != forge.MaxTries-1 {
		t.Errorf("%d requests and %d waits, want %d and %d", n, len(waits), forge.MaxTries, forge.MaxTries-1)
	}

	// A wait longer than forge.MaxWait is the answer, not a wait.
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", fmt.Sprint(int(forge.MaxWait/time.Second)+1))
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"message":"slow down"}`)
		return true
	}
	waits, before = nil, len(srv.Requests)
	if _, err := p.Comment(context.Background(), Marker(nil), "body"); err == nil {
		t.Fatal("no error")
	}
	if n := len(srv.Requests) - before; n != 1 || len(waits) != 0 {
		t.Errorf("%d requests and waits %v, want 1 request and none", n, waits)
	}
}

// TestAWaitEndsWithTheContext: a cancelled run stops waiting at once, and the retry
// is not sent.
func TestAWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := forge.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep = %v, want context.Canceled", err)
	}
	srv := githubtest.New(token)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	p := publisherWaiting(t, srv, func(context.Context, time.Duration) error { return context.Canceled })
	// The explained error keeps only the text (it is scrubbed of the token).
	if _, err := p.Comment(context.Background(), Marker(nil), "body"); err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("err = %v, want the cancellation", err)
	}
	if len(srv.Requests) != 1 {
		t.Errorf("%d requests, want 1", len(srv.Requests))
	}
}

func TestGitHubRefusalsSayWhatToDoAndHideTheToken(t *testing.T) {
	cases := []struct {
		code int
		want string
	}{
		{http.StatusForbidden, "a pull request from a fork gets a read-only token"},
		{http.StatusNotFound, "check the repository and the pull request number"},
	}
	for _, c := range cases {
		srv := githubtest.New(token)
		srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.WriteHeader(c.code)
			fmt.Fprintf(w, `{"message":"refused for %s"}`, r.Header.Get("Authorization"))
			return true
		}
		_, err := publisher(t, srv).Comment(context.Background(), Marker(nil), "body")
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d: %v", c.code, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-token-value") {
			t.Errorf("%d: the token is in the error: %v", c.code, err)
		}
		if len(srv.Requests) != 1 {
			t.Errorf("%d: retried a refusal: %d requests", c.code, len(srv.Requests))
		}
	}
}

func TestCheckRunOrCommitStatus(t *testing.T) {
	srv := githubtest.New(token)
	defer srv.Close()
	p := publisher(t, srv)
	if how, err := p.Check(context.Background(), "", true, "1 to add, 1 error", "summary", "details"); err != nil || how != "check run" {
		t.Fatalf("%s %v", how, err)
	}
	if len(srv.CheckRuns) != 1 || srv.CheckRuns[0]["conclusion"] != "failure" || srv.CheckRuns[0]["name"] != "drift" || srv.CheckRuns[0]["output"].(map[string]any)["text"] != "details" ||
		srv.CheckRuns[0]["head_sha"] != "0123456789abcdef0123456789abcdef01234567" {
		t.Fatalf("check runs = %+v", srv.CheckRuns)
	}
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if strings.HasSuffix(r.URL.Path, "/check-runs") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"Resource not accessible by integration"}`)
			return true
		}
		return false
	}
	if how, err := p.Check(context.Background(), "drift (web)", false, "no changes", "summary", ""); err != nil || how != "commit status" {
		t.Fatalf("%s %v", how, err)
	}
	if len(srv.Statuses) != 1 || srv.Statuses[0]["state"] != "success" || srv.Statuses[0]["context"] != "drift (web)" {
		t.Fatalf("statuses = %+v", srv.Statuses)
	}
}
