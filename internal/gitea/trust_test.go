package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/gitea/giteatest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// credentialed lists the requests that carried any credential.
func credentialed(srv *giteatest.Server) []string {
	var out []string
	for _, r := range srv.Received {
		if r.Authorization+r.OTP != "" {
			out = append(out, r.Host+" "+r.Method+" "+r.Path)
		}
	}
	return out
}

// TestRedirectsToAnotherHostAreRefusedWithoutTheToken: the API redirects drift to a
// host it controls, by another port or another name for the same machine; drift
// refuses, and the other host never hears from it.
func TestRedirectsToAnotherHostAreRefusedWithoutTheToken(t *testing.T) {
	t.Parallel()
	attacker := giteatest.New(token)
	defer attacker.Close()
	srv := giteatest.New(token)
	defer srv.Close()
	pr := srv.AddPullRequest(giteatest.Someone, "change")
	for name, to := range map[string]string{
		"another port": attacker.URL,
		"another name": strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1),
	} {
		srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
			http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
			return true
		}
		_, err := forge.Upsert(context.Background(), site(t, srv, pr), forge.Marker(nil), "body", Kind.Note, nil)
		if err == nil || !strings.Contains(err.Error(), "does not follow redirects to other hosts") || strings.Contains(err.Error(), token) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(attacker.Received) != 0 {
		t.Errorf("the other host was asked: %+v", attacker.Received)
	}
}

// TestRedirectsWithinTheAPIAreFollowed: a renamed repository answers with its new
// address on the same host (Gitea's RedirectToRepo, 307 so that a POST stays one),
// and drift follows it there with the token.
func TestRedirectsWithinTheAPIAreFollowed(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	pr := srv.AddPullRequest(giteatest.Someone, "change")
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		rest, moved := strings.CutPrefix(r.URL.EscapedPath(), "/api/v1/repos/acme/old-name/")
		if !moved {
			return false
		}
		http.Redirect(w, r, srv.URL+"/api/v1/repos/acme/gitops/"+rest+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
		return true
	}
	s := siteWaiting(t, srv, forge.CI{Token: token, PR: pr, Repository: "acme/old-name"}, nil)
	if how, err := forge.Upsert(context.Background(), s, forge.Marker(nil), "body", Kind.Note, nil); err != nil || how != "created" {
		t.Fatalf("%s %v", how, err)
	}
	if c := srv.Comments(pr); len(c) != 1 || c[0].Body != forge.Marker(nil)+"\nbody" {
		t.Fatalf("comments = %+v", c)
	}
}

// TestAbsoluteURLsOnOtherHostsGoWithoutTheToken: a URL an answer hands drift (a Link
// header on the instance's ROOT_URL, an html_url) may name any host; only the API's
// own origin gets the token, whatever credential header the client set.
func TestAbsoluteURLsOnOtherHostsGoWithoutTheToken(t *testing.T) {
	t.Parallel()
	other := giteatest.New(token)
	defer other.Close()
	srv := giteatest.New(token)
	defer srv.Close()
	s := site(t, srv, 1)
	for _, u := range []string{other.URL + "/api/v1/user", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/api/v1/user", srv.URL + "/api/v1/user"} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "token set-by-someone-else")
		req.Header.Set("X-Gitea-OTP", "123456")
		if resp, err := s.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	if got := credentialed(other); len(got) != 0 {
		t.Errorf("another port got a credential: %v", got)
	}
	got := credentialed(srv)
	last := srv.Received[len(srv.Received)-1]
	if len(got) != 1 || !strings.HasPrefix(got[0], "127.0.0.1:") || last.Authorization != "token "+token || last.OTP != "" {
		t.Errorf("the API host (and only under its own name) should get the token once, got %v", got)
	}
}

// TestNoTokenInAnyRequestBody: a whole review and a drift issue's life send the token
// in the Authorization header of every request and in no body or query.
func TestNoTokenInAnyRequestBody(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	srv.AddCommit(headSHA)
	pr := srv.AddPullRequest(giteatest.Someone, "change")
	s := site(t, srv, pr)
	ctx := context.Background()
	for _, body := range []string{"one", "two"} {
		if _, err := forge.Upsert(ctx, s, forge.Marker(nil), body, Kind.Note, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetStatus(ctx, forge.Status{Name: "drift", Description: "no changes"}); err != nil {
		t.Fatal(err)
	}
	for _, drift := range []bool{true, false} {
		if _, err := forge.DriftIssue(ctx, s, DriftLabel, forge.Marker(nil), "fp", drift, "drift", "body", nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(srv.Received) < 10 {
		t.Fatalf("only %d requests", len(srv.Received))
	}
	for _, r := range srv.Received {
		if strings.Contains(r.Body, token) || strings.Contains(r.Query, token) {
			t.Errorf("%s %s carries the token in its body or query", r.Method, r.Path)
		}
		if r.Authorization != "token "+token {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Authorization)
		}
	}
}

// TestRefusalsSayWhatToDoAndHideTheToken: each refusal says what to do, keeps its
// status for the caller (a 403 is how publishing tells a read-only token), is tried
// once, and never quotes the token, even when the server echoes it. The 401, the
// scope's 403 and the fork's 403 are the stand-in's own, as Gitea answers them.
func TestRefusalsSayWhatToDoAndHideTheToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(srv *giteatest.Server) forge.CI
		code  int
		want  string
	}{
		{"a wrong token", func(srv *giteatest.Server) forge.CI { return forge.CI{Token: token + "-revoked"} }, http.StatusUnauthorized, "wrong, expired or revoked"},
		{"a token without read:user", func(srv *giteatest.Server) forge.CI {
			srv.Scopes = []string{"write:issue", "write:repository"}
			return forge.CI{Token: token}
		}, http.StatusForbidden, "lacks a scope; drift needs write:issue, write:repository (for the commit status) and read:user"},
		{"a fork's job token", func(srv *giteatest.Server) forge.CI {
			srv.ActionsToken, srv.ForkPullRequest = "job-"+token, true
			return forge.CI{Token: "job-" + token}
		}, http.StatusForbidden, "a pull request from a fork gets a read-only Actions token"},
		{"another repository", func(srv *giteatest.Server) forge.CI { return forge.CI{Token: token, Repository: "acme/elsewhere"} }, http.StatusNotFound, "check the repository"},
		{"a proxy's body limit", func(srv *giteatest.Server) forge.CI { srv.MaxBody = 10; return forge.CI{Token: token} }, http.StatusRequestEntityTooLarge, "a proxy in front of it"},
		{"an archived repository", func(srv *giteatest.Server) forge.CI {
			srv.Fault = echo(http.StatusLocked)
			return forge.CI{Token: token}
		}, http.StatusLocked, "archived"},
		{"a server error", func(srv *giteatest.Server) forge.CI {
			srv.Fault = echo(http.StatusInternalServerError)
			return forge.CI{Token: token}
		}, http.StatusInternalServerError, "a server error"},
	}
	for _, c := range cases {
		srv := giteatest.New(token)
		pr := srv.AddPullRequest(giteatest.Someone, "change")
		srv.AddComment(pr, giteatest.Bot, forge.Marker(nil)+"\nold")
		ci := c.setup(srv)
		ci.PR = pr
		s := siteWaiting(t, srv, ci, func(context.Context, time.Duration) error { return nil })
		_, err := forge.Upsert(context.Background(), s, forge.Marker(nil), "body", Kind.Note, nil)
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) || StatusCode(err) != c.code {
			t.Errorf("%s: %v (status %d)", c.name, err, StatusCode(err))
		}
		if err != nil && strings.Contains(err.Error(), token) {
			t.Errorf("%s: the token is in the error: %v", c.name, err)
		}
	}
}

// echo answers every request with code and a message that quotes the credential.
func echo(code int) func(w http.ResponseWriter, r *http.Request, n int) bool {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"message":"refused for %s","url":"/api/swagger"}`, r.Header.Get("Authorization"))
		return true
	}
}

// TestRateLimitsAndServerErrorsAreWaitedOutAndBounded: a proxy's 429 is waited out
// for its Retry-After; a 503 to a GET is tried again after a growing pause; a POST
// answered 502 is never sent twice. The waits are recorded, not slept.
func TestRateLimitsAndServerErrorsAreWaitedOutAndBounded(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	pr := srv.AddPullRequest(giteatest.Someone, "change")
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	var waits []time.Duration
	record := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	s := siteWaiting(t, srv, forge.CI{Token: token, PR: pr}, record)
	if _, err := forge.Upsert(context.Background(), s, forge.Marker(nil), "body", Kind.Note, nil); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 2 || waits[0] != 7*time.Second || waits[1] != 2*time.Second || len(srv.Comments(pr)) != 1 {
		t.Fatalf("waits = %v, comments %d", waits, len(srv.Comments(pr)))
	}
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.Method != http.MethodPost {
			return false
		}
		w.WriteHeader(http.StatusBadGateway)
		return true
	}
	waits = nil
	before := len(srv.Received)
	_, err := forge.Upsert(context.Background(), s, forge.Marker([]string{"other"}), "body", Kind.Note, nil)
	if StatusCode(err) != http.StatusBadGateway || len(waits) != 0 || len(srv.Received)-before != 2 {
		t.Errorf("a POST's 502: %v, waits %v, %d requests (want the list, then one POST)", err, waits, len(srv.Received)-before)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := forge.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep = %v", err)
	}
}

// TestACommentOverTheProxysLimitIsTooLong: a 413 reads as too long, so publishing
// falls back to the summary; another refusal does not.
func TestACommentOverTheProxysLimitIsTooLong(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	srv.MaxBody = 100
	pr := srv.AddPullRequest(giteatest.Someone, "change")
	_, err := site(t, srv, pr).CreateNote(context.Background(), strings.Repeat("x", 101))
	if !TooLong(err) || !Kind.TooLong(err) || Kind.StatusCode(err) != http.StatusRequestEntityTooLarge {
		t.Errorf("over the limit: %v is not too long", err)
	}
	if TooLong(&Error{Code: http.StatusUnprocessableEntity, msg: "[Body]: Required"}) || TooLong(errors.New("413")) {
		t.Error("another refusal read as too long")
	}
	if !TooLong(&Error{Code: http.StatusUnprocessableEntity, msg: "content is too long"}) {
		t.Error("a 422 saying too long is not")
	}
}
