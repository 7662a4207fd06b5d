package azure

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/azure/azuretest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// TestTheTokenGoesToTheAPIOriginOnly: a whole run (discovery, threads, status, work
// item) sends the credential to the API's origin on every request and in no body;
// a redirect to another host (another port, another name) is refused before that
// host hears anything; a resource area Azure DevOps places on another origin is
// refused, not followed.
func TestTheTokenGoesToTheAPIOriginOnly(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	ctx := context.Background()
	s := site(t, srv, 7)
	if _, err := forge.Upsert(ctx, s, forge.Marker(nil), "body", "comment", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Self(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, forge.Status{Description: "1 to add"}); err != nil {
		t.Fatal(err)
	}
	if _, err := forge.DriftIssue(ctx, s, "drift", forge.Marker(nil), "f", true, "Drift", "body", nil); err != nil {
		t.Fatal(err)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+pat))
	seen := map[string]bool{}
	for _, r := range srv.Received {
		seen[r.Method+" "+r.Path] = true
		if r.Authorization != basic {
			t.Errorf("%s %s carried %q", r.Method, r.Path, r.Authorization)
		}
		if strings.Contains(r.Body, pat) || strings.Contains(r.Body, basic[len("Basic "):]) {
			t.Errorf("%s %s has the token in its body", r.Method, r.Path)
		}
	}
	if !seen["OPTIONS /acme/_apis"] || !seen["GET /acme/_apis/ResourceAreas"] || !seen["GET /acme/_apis/ConnectionData"] {
		t.Errorf("discovery not asked: %v", seen)
	}

	attacker := azuretest.New(pat)
	defer attacker.Close()
	for name, to := range map[string]string{"another port": attacker.URL, "another name": strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)} {
		srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
			if r.Method == http.MethodOptions || strings.HasSuffix(r.URL.Path, "ResourceAreas") {
				return false
			}
			http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
			return true
		}
		_, err := forge.Upsert(ctx, site(t, srv, 7), forge.Marker(nil), "body", "comment", nil)
		if err == nil || !strings.Contains(err.Error(), "does not follow redirects to other hosts") || strings.Contains(err.Error(), pat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	srv.Fault = nil
	if len(attacker.Received) != 0 {
		t.Errorf("the other host was asked: %+v", attacker.Received)
	}
	srv.AreaURL = attacker.URL + "/acme/"
	_, err := forge.Upsert(ctx, site(t, srv, 7), forge.Marker(nil), "body", "comment", nil)
	if err == nil || !strings.Contains(err.Error(), "drift sends the token to that origin only") {
		t.Errorf("an area on another origin: %v", err)
	}
	if len(attacker.Received) != 0 {
		t.Errorf("the area's host was asked: %+v", attacker.Received)
	}
}

// TestAJobTokenIsBearerAndAPATIsBasic: System.AccessToken (a JWT) is sent as
// Bearer, a personal access token as Basic with an empty user, as the library's
// NewPatConnection does.
func TestAJobTokenIsBearerAndAPATIsBasic(t *testing.T) {
	t.Parallel()
	jwt := "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJuYW1laWQiOiIzZjFjIn0.c2lnbmF0dXJl"
	srv := azuretest.New(jwt)
	defer srv.Close()
	if _, err := site(t, srv, 7).Self(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Received[len(srv.Received)-1].Authorization; got != "Bearer "+jwt {
		t.Errorf("job token sent as %q", got)
	}
	for tok, jwtish := range map[string]bool{jwt: true, pat: false, "eyJ.a.b": false, "a.b.c": false} {
		if isJWT(tok) != jwtish {
			t.Errorf("isJWT(%q) = %t", tok, !jwtish)
		}
	}
}

// TestThrottlingIsWaitedOutAndAPostNeverSentTwice: a 429 is waited out for its
// Retry-After; a 503 to a GET is tried again; a POST answered 503 is not.
func TestThrottlingIsWaitedOutAndAPostNeverSentTwice(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/threads") && n < 6 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"$id":"1","message":"busy","typeKey":"ServiceUnavailableException"}`)
			return true
		}
		return false
	}
	var waits []time.Duration
	s := siteWaiting(t, srv, 7, func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	_, err := forge.Upsert(context.Background(), s, forge.Marker(nil), "body", "comment", nil)
	if StatusCode(err) != 503 || !strings.Contains(err.Error(), "a server error") {
		t.Errorf("err = %v", err)
	}
	posts := 0
	for _, r := range srv.Received {
		if r.Method == http.MethodPost {
			posts++
		}
	}
	if len(waits) == 0 || waits[0] != 7*time.Second || posts != 1 {
		t.Errorf("waits %v, %d POSTs", waits, posts)
	}
}
