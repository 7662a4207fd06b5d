package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/github/githubtest"
)

const token = "ghs_secret-token-value"

func publisher(t *testing.T, srv *githubtest.Server) *Publisher {
	t.Helper()
	p, err := NewPublisher(Context{Token: token, Repository: "acme/gitops", APIURL: srv.URL, PR: 7, HeadSHA: "0123456789abcdef0123456789abcdef01234567"}, nil)
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

func TestRateLimitsAreWaitedOutAndBounded(t *testing.T) {
	srv := githubtest.New(token)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		switch n {
		case 1: // primary rate limit, reset in a second
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Add(time.Second).Unix()))
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"API rate limit exceeded"}`)
			return true
		case 2: // secondary rate limit
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"You have exceeded a secondary rate limit"}`)
			return true
		}
		return false
	}
	p := publisher(t, srv)
	if _, err := p.Comment(context.Background(), Marker(nil), "body"); err != nil {
		t.Fatal(err)
	}
	if len(srv.Comments(7)) != 1 {
		t.Fatal("no comment after the rate limits")
	}
	// Limited on every request: a bounded number of tries, then an error.
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"message":"slow down"}`)
		return true
	}
	before := len(srv.Requests)
	if _, err := p.Comment(context.Background(), Marker(nil), "body"); err == nil {
		t.Fatal("no error")
	}
	if n := len(srv.Requests) - before; n != maxTries {
		t.Errorf("%d requests, want %d", n, maxTries)
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
	if how, err := p.Check(context.Background(), true, "1 to add, 1 error", "summary"); err != nil || how != "check run" {
		t.Fatalf("%s %v", how, err)
	}
	if len(srv.CheckRuns) != 1 || srv.CheckRuns[0]["conclusion"] != "failure" || srv.CheckRuns[0]["name"] != "drift" ||
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
	if how, err := p.Check(context.Background(), false, "no changes", "summary"); err != nil || how != "commit status" {
		t.Fatalf("%s %v", how, err)
	}
	if len(srv.Statuses) != 1 || srv.Statuses[0]["state"] != "success" || srv.Statuses[0]["context"] != "drift" {
		t.Fatalf("statuses = %+v", srv.Statuses)
	}
}
