package bitbucket

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/bitbucket/bitbuckettest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// credentialed lists the requests that carried any credential.
func credentialed(srv *bitbuckettest.Server) []string {
	var out []string
	for _, r := range srv.Received {
		if r.Authorization+r.Cookie != "" {
			out = append(out, r.Host+" "+r.Method+" "+r.Path)
		}
	}
	return out
}

// TestRedirectsToAnotherHostAreRefusedWithoutTheToken: the API redirects drift to a
// host it controls, by another port or another name for the same machine; drift
// refuses the redirect and the other host never hears from it.
func TestRedirectsToAnotherHostAreRefusedWithoutTheToken(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		attacker := bitbuckettest.New(d.d, token)
		srv := bitbuckettest.New(d.d, token)
		for name, to := range map[string]string{"another port": attacker.URL, "another name": strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)} {
			srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
				http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
				return true
			}
			_, err := forge.Upsert(context.Background(), site(t, ciOf(srv)), forge.Marker(nil), "body", "comment", nil)
			if err == nil || !strings.Contains(err.Error(), "does not follow redirects to other hosts") || strings.Contains(err.Error(), token) {
				t.Errorf("%s, %s: %v", d.name, name, err)
			}
		}
		if len(attacker.Received) != 0 {
			t.Errorf("%s: the other host was asked: %+v", d.name, attacker.Received)
		}
		attacker.Close()
		srv.Close()
	}
}

// TestNextPagesOnAnotherHostAreNotFollowed: Cloud's answer names its next page by
// URL; one on another origin is not asked, with or without the token.
func TestNextPagesOnAnotherHostAreNotFollowed(t *testing.T) {
	t.Parallel()
	attacker := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer attacker.Close()
	srv := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"pagelen": 100, "values": []any{}, "next": attacker.URL + r.URL.Path + "?page=2"})
		return true
	}
	err := site(t, ciOf(srv)).Notes(context.Background(), func(forge.Note) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "drift does not follow it, so the token is never sent there") {
		t.Errorf("err = %v", err)
	}
	if len(attacker.Received) != 0 {
		t.Errorf("the other host was asked: %+v", attacker.Received)
	}
}

// TestRedirectsWithinTheAPIAreFollowed: a renamed repository answers with its new
// address on the same host.
func TestRedirectsWithinTheAPIAreFollowed(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		rest, moved := strings.CutPrefix(r.URL.Path, "/2.0/repositories/acme/old-name/")
		if !moved {
			return false
		}
		http.Redirect(w, r, srv.URL+"/2.0/repositories/acme/gitops/"+rest+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
		return true
	}
	c := ciOf(srv)
	c.Repository = "acme/old-name"
	if how, err := forge.Upsert(context.Background(), site(t, c), forge.Marker(nil), "body", "comment", nil); err != nil || how != "created" || len(srv.Comments()) != 1 {
		t.Fatalf("%s %v", how, err)
	}
}

// TestTheTokenGoesOnlyToTheAPIAndNeverInABody: through a whole run of each kind
// (comment twice, status, issue flow), every request carries the token to the API's
// own origin, and no body holds it; a request the client is handed for another host
// goes without any credential, whatever was set on it.
func TestTheTokenGoesOnlyToTheAPIAndNeverInABody(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		other := bitbuckettest.New(d.d, token)
		srv := bitbuckettest.New(d.d, token)
		s := site(t, ciOf(srv))
		ctx := context.Background()
		for range 2 {
			if _, err := forge.Upsert(ctx, s, forge.Marker(nil), "body", "comment", nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SetStatus(ctx, forge.Status{Description: "1 to add"}); err != nil {
			t.Fatal(err)
		}
		_, _ = forge.DriftIssue(ctx, s, "drift", forge.Marker(nil), "x", true, "Drift", "body", nil)
		c := s.(interface{ httpClient() *http.Client }).httpClient()
		for _, u := range []string{other.URL + "/x", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/x"} {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			req.Header.Set("Authorization", "Bearer set-by-someone-else")
			req.Header.Set("Cookie", "BITBUCKETSESSIONID=x")
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		if got := credentialed(other); len(got) != 0 {
			t.Errorf("%s: another port got a credential: %v", d.name, got)
		}
		for _, r := range srv.Received {
			switch {
			case strings.HasPrefix(r.Host, "localhost:"):
				if r.Authorization+r.Cookie != "" {
					t.Errorf("%s: another name of the host got a credential", d.name)
				}
			case r.Authorization != "Bearer "+token || r.Cookie != "":
				t.Errorf("%s: %s %s carried %q", d.name, r.Method, r.Path, r.Authorization)
			}
			if strings.Contains(r.Body, token) {
				t.Errorf("%s: the token is in the body of %s %s", d.name, r.Method, r.Path)
			}
		}
		srv.Close()
		other.Close()
	}
}

// TestRefusalsSayWhatToDoAndHideTheToken: each refusal says what to do, keeps its
// status for the caller, is tried once, and never quotes the token or the password
// of user:password, even when the server echoes them.
func TestRefusalsSayWhatToDoAndHideTheToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code int
		want string
	}{
		{http.StatusUnauthorized, "wrong, expired or revoked"},
		{http.StatusForbidden, "a Cloud access token needs pullrequest:write"},
		{http.StatusNotFound, "check the repository"},
		{http.StatusInternalServerError, "a server error"},
	}
	for _, d := range dialects {
		for _, c := range cases {
			srv := bitbuckettest.New(d.d, token)
			srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.code)
				fmt.Fprintf(w, `{"type": "error", "error": {"message": "refused for %s"}, "errors": [{"message": "refused for %s"}]}`, r.Header.Get("Authorization"), token)
				return true
			}
			for _, cred := range []string{token, "ann:" + token} {
				ci := ciOf(srv)
				ci.Token = cred
				before := len(srv.Received)
				_, err := site(t, ci).CreateNote(context.Background(), "body")
				if err == nil || !strings.Contains(err.Error(), c.want) || StatusCode(err) != c.code || !strings.Contains(err.Error(), "refused for") {
					t.Errorf("%s %d: %v", d.name, c.code, err)
				}
				if err != nil && (strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "YW5uOnNlY3JldC10b2tlbi12YWx1ZQ")) {
					t.Errorf("%s %d: a secret is in the error: %v", d.name, c.code, err)
				}
				if n := len(srv.Received) - before; n != 1 {
					t.Errorf("%s %d: %d requests, want 1 (a POST is never sent twice)", d.name, c.code, n)
				}
			}
			srv.Close()
		}
	}
}

// TestTheStandInRefusesWhatBitbucketRefuses: a wrong token is a 401, a Cloud access
// token without the scope is a 403 naming it, another's comment cannot be edited;
// drift's errors explain each.
func TestTheStandInRefusesWhatBitbucketRefuses(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer srv.Close()
	c := ciOf(srv)
	c.Token = "wrong"
	if _, err := site(t, c).CreateNote(context.Background(), "x"); StatusCode(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), "Token is invalid") {
		t.Errorf("wrong token: %v", err)
	}
	srv.Tokens["read-only"] = bitbuckettest.Token{User: bitbuckettest.RepositoryBot, Scopes: []string{"pullrequest", "repository"}, AccessToken: true}
	c.Token = "read-only"
	_, err := site(t, c).CreateNote(context.Background(), "x")
	if StatusCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), "pullrequest:write") || !strings.Contains(err.Error(), "required") {
		t.Errorf("no write scope: %v", err)
	}
	id := srv.AddComment(bitbuckettest.Someone, "theirs")
	if err := site(t, ciOf(srv)).UpdateNote(context.Background(), id, "mine"); StatusCode(err) != http.StatusForbidden {
		t.Errorf("another's comment: %v", err)
	}
	if srv.Comments()[0].Text != "theirs" {
		t.Error("another's comment was edited")
	}
}

// TestRateLimitsAndServerErrorsAreWaitedOutAndBounded: a 429 is waited out for its
// Retry-After, a 503 to a GET is tried again after a growing pause, a limit on every
// request gives up after forge.MaxTries, and a POST's 502 is never sent twice. The
// waits are recorded, not slept.
func TestRateLimitsAndServerErrorsAreWaitedOutAndBounded(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.DataCenter, token)
	defer srv.Close()
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
	if _, err := forge.Upsert(context.Background(), siteWaiting(t, ciOf(srv), record), forge.Marker(nil), "body", "comment", nil); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 2 || waits[0] != 7*time.Second || waits[1] != 2*time.Second || len(srv.Comments()) != 1 {
		t.Fatalf("waits = %v", waits)
	}
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	before := len(srv.Received)
	_, err := forge.Upsert(context.Background(), siteWaiting(t, ciOf(srv), record), forge.Marker(nil), "body", "comment", nil)
	if StatusCode(err) != http.StatusTooManyRequests || !strings.Contains(err.Error(), "after "+strconv.Itoa(forge.MaxTries)+" tries") || len(srv.Received)-before != forge.MaxTries {
		t.Errorf("limited on every request: %v", err)
	}
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.Method != http.MethodPost {
			return false
		}
		w.WriteHeader(http.StatusBadGateway)
		return true
	}
	before = len(srv.Received)
	if _, err := site(t, ciOf(srv)).CreateNote(context.Background(), "x"); StatusCode(err) != http.StatusBadGateway || len(srv.Received)-before != 1 {
		t.Errorf("a POST's 502: %v after %d requests", err, len(srv.Received)-before)
	}
}
