package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/gitlab/gitlabtest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// credentialed lists the requests that carried any credential.
func credentialed(srv *gitlabtest.Server) []string {
	var out []string
	for _, r := range srv.Received {
		if r.PrivateToken+r.JobToken+r.Authorization != "" {
			out = append(out, r.Host+" "+r.Method+" "+r.Path)
		}
	}
	return out
}

// TestRedirectsToAnotherHostAreRefusedWithoutTheToken: the API redirects drift to a
// host it controls, by another port or another name for the same machine. Go would
// carry PRIVATE-TOKEN across such a redirect (it drops only Authorization and
// cookies); drift refuses the redirect and the other host never hears from it.
func TestRedirectsToAnotherHostAreRefusedWithoutTheToken(t *testing.T) {
	t.Parallel()
	attacker := gitlabtest.New(token)
	defer attacker.Close()
	srv := gitlabtest.New(token)
	defer srv.Close()
	for name, to := range map[string]string{
		"another port": attacker.URL,
		"another name": strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1),
	} {
		srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
			http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
			return true
		}
		_, err := publisher(t, srv).Comment(context.Background(), forge.Marker(nil), "body")
		if err == nil || !strings.Contains(err.Error(), "does not follow redirects to other hosts") || strings.Contains(err.Error(), token) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(attacker.Received) != 0 {
		t.Errorf("the other host was asked: %+v", attacker.Received)
	}
	if got := credentialed(attacker); len(got) != 0 {
		t.Errorf("the other host got a credential: %v", got)
	}
}

// TestRedirectsWithinTheAPIAreFollowed: a project moved to another path answers with
// its new address on the same host.
func TestRedirectsWithinTheAPIAreFollowed(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		rest, moved := strings.CutPrefix(r.URL.EscapedPath(), "/api/v4/projects/acme%2Fold-name/")
		if !moved {
			return false
		}
		http.Redirect(w, r, srv.URL+"/api/v4/projects/42/"+rest+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
		return true
	}
	p, err := NewPublisher(Context{Token: token, Project: "acme/old-name", MR: 7, APIURL: srv.URL + "/api/v4"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if how, err := p.Comment(context.Background(), forge.Marker(nil), "body"); err != nil || how != "created" {
		t.Fatalf("%s %v", how, err)
	}
	if n := srv.Notes(7); len(n) != 1 || n[0].Body != forge.Marker(nil)+"\nbody" {
		t.Fatalf("notes = %+v", n)
	}
}

// TestAbsoluteURLsOnOtherHostsGoWithoutTheToken: a URL an answer hands drift (a Link
// header, a web_url) may name any host; only the API's own origin gets the token,
// whatever credential header the client set.
func TestAbsoluteURLsOnOtherHostsGoWithoutTheToken(t *testing.T) {
	t.Parallel()
	other := gitlabtest.New(token)
	defer other.Close()
	srv := gitlabtest.New(token)
	defer srv.Close()
	p := publisher(t, srv)
	for _, u := range []string{other.URL + "/api/v4/user", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/api/v4/user", srv.URL + "/api/v4/user"} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("PRIVATE-TOKEN", "set-by-someone-else")
		req.Header.Set("JOB-TOKEN", "set-by-someone-else")
		if resp, err := p.client.HTTPClient().Do(req); err == nil {
			resp.Body.Close()
		}
	}
	if got := credentialed(other); len(got) != 0 {
		t.Errorf("another port got a credential: %v", got)
	}
	got := credentialed(srv)
	if len(got) != 1 || !strings.HasPrefix(got[0], "127.0.0.1:") || srv.Received[len(srv.Received)-1].PrivateToken != token || srv.Received[len(srv.Received)-1].JobToken != "" {
		t.Errorf("the API host (and only under its own name) should get the token once, got %v", got)
	}
}

// TestRateLimitsAndServerErrorsAreWaitedOutAndBounded: a 429 is waited out for its
// Retry-After, or until its RateLimit-Reset; a 503 to a GET is tried again after a
// growing pause; a limit on every request gives up after forge.MaxTries; a wait longer than
// forge.MaxWait is not waited at all; a POST that failed with a 502 is never sent twice.
// The waits are recorded, not slept.
func TestRateLimitsAndServerErrorsAreWaitedOutAndBounded(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	reset := time.Now().Add(30 * time.Second)
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "7")
			w.Header().Set("RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"Retry later"}`)
			return true
		case 2:
			w.Header().Set("RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"Retry later"}`)
			return true
		case 3:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"message":"503 Service Unavailable"}`)
			return true
		}
		return false
	}
	var waits []time.Duration
	record := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	p := publisherWaiting(t, srv, record)
	if _, err := p.Comment(context.Background(), forge.Marker(nil), "body"); err != nil {
		t.Fatal(err)
	}
	if len(srv.Notes(7)) != 1 {
		t.Fatal("no note after the faults")
	}
	if len(waits) != 3 || waits[0] != 7*time.Second || waits[1] < 28*time.Second || waits[1] > 32*time.Second || waits[2] != 4*time.Second {
		t.Fatalf("waits = %v, want 7s, ~31s (until the reset), then 4s (the third try's pause)", waits)
	}

	cases := []struct {
		name     string
		fault    func(w http.ResponseWriter, r *http.Request, n int) bool
		requests int
		waits    int
		code     int
		want     string
	}{
		{"limited on every request", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"Retry later"}`)
			return true
		}, forge.MaxTries, forge.MaxTries - 1, http.StatusTooManyRequests, "rate limit (429) stopped drift after 4 tries"},
		{"a wait over forge.MaxWait", func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Retry-After", strconv.Itoa(int(forge.MaxWait/time.Second)+1))
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}, 1, 0, http.StatusTooManyRequests, "run again later"},
		{"a POST's 502", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if r.Method != http.MethodPost {
				return false
			}
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, `{"message":"502 Bad Gateway"}`)
			return true
		}, 2, 0, http.StatusBadGateway, "a server error"}, // the list, then the one POST
	}
	for _, c := range cases {
		srv.Fault = c.fault
		waits = nil
		before := len(srv.Received)
		_, err := publisherWaiting(t, srv, record).Comment(context.Background(), forge.Marker([]string{c.name}), "body")
		if err == nil || StatusCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (status %d)", c.name, err, StatusCode(err))
		}
		if n := len(srv.Received) - before; n != c.requests || len(waits) != c.waits {
			t.Errorf("%s: %d requests and waits %v, want %d and %d waits", c.name, n, waits, c.requests, c.waits)
		}
	}
}

// TestAWaitEndsWithTheContext: a cancelled run stops waiting at once, and the retry
// is not sent.
func TestAWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := forge.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep = %v", err)
	}
	srv := gitlabtest.New(token)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	p := publisherWaiting(t, srv, func(context.Context, time.Duration) error { return context.Canceled })
	if _, err := p.Comment(context.Background(), forge.Marker(nil), "body"); err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("err = %v", err)
	}
	if len(srv.Received) != 1 {
		t.Errorf("%d requests, want 1", len(srv.Received))
	}
}

// TestRefusalsSayWhatToDoAndHideTheToken: each refusal GitLab gives says what to do,
// keeps its status for the caller, is tried once, and never quotes the token, even
// when the server echoes it.
func TestRefusalsSayWhatToDoAndHideTheToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code int
		want string
	}{
		{http.StatusUnauthorized, "wrong, expired or revoked"},
		{http.StatusForbidden, "a merge request from a fork runs in the fork"},
		{http.StatusNotFound, "check the project (CI_PROJECT_ID) and the merge request IID"},
		{http.StatusConflict, "a conflict"},
		{http.StatusRequestEntityTooLarge, "larger than the instance allows"},
		{http.StatusUnprocessableEntity, "rejected the request"},
		{http.StatusInternalServerError, "a server error"},
	}
	for _, c := range cases {
		srv := gitlabtest.New(token)
		srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.code)
			fmt.Fprintf(w, `{"message":"refused for %s"}`, r.Header.Get("Private-Token"))
			return true
		}
		_, err := publisher(t, srv).Comment(context.Background(), forge.Marker(nil), "body")
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) || StatusCode(err) != c.code {
			t.Errorf("%d: %v", c.code, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-token-value") {
			t.Errorf("%d: the token is in the error: %v", c.code, err)
		}
		if len(srv.Received) != 1 {
			t.Errorf("%d: %d requests, want 1", c.code, len(srv.Received))
		}
	}
}

// TestANoteOverGitLabsLimitIsTooLong: GitLab's 400 for a note over its limit (and a
// 413 from the request size) read as too long, so publish falls back to the summary;
// another 400 does not.
func TestANoteOverGitLabsLimitIsTooLong(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	srv.MaxNote = 100
	_, err := publisher(t, srv).CreateNote(context.Background(), strings.Repeat("x", 101))
	if !TooLong(err) {
		t.Errorf("over the limit: %v is not too long", err)
	}
	if TooLong(&Error{Code: http.StatusRequestEntityTooLarge}) != true || TooLong(&Error{Code: http.StatusBadRequest, msg: "title is missing"}) {
		t.Error("413 or another 400 misread")
	}
}
