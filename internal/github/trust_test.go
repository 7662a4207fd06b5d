package github

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/github/githubtest"
)

var mallory = githubtest.User{Login: "mallory", Type: "User"}

// authorized lists the hosts that got an Authorization header.
func authorized(srv *githubtest.Server) []string {
	var hosts []string
	for _, r := range srv.Received {
		if r.Authorization != "" {
			hosts = append(hosts, r.Host+" "+r.Method+" "+r.Path)
		}
	}
	return hosts
}

// TestRedirectsToAnotherHostAreRefusedWithoutTheToken: the API redirects drift to a
// host it controls, by another port or another name for the same machine. The
// transport adds the token itself, so Go's redirect stripping would not help; drift
// refuses the redirect and the other host never hears from it.
func TestRedirectsToAnotherHostAreRefusedWithoutTheToken(t *testing.T) {
	t.Parallel()
	attacker := githubtest.New(token)
	defer attacker.Close()
	srv := githubtest.New(token)
	defer srv.Close()
	for name, to := range map[string]string{
		"another port": attacker.URL,
		"another name": strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1),
	} {
		srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
			http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
			return true
		}
		_, err := publisher(t, srv).Comment(context.Background(), Marker(nil), "body")
		if err == nil || !strings.Contains(err.Error(), "does not follow redirects to other hosts") {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), token) {
			t.Errorf("%s: the token is in the error", name)
		}
	}
	if len(attacker.Received) != 0 {
		t.Errorf("the other host was asked: %+v", attacker.Received)
	}
	if len(srv.Comments(7)) != 0 {
		t.Error("a comment was written")
	}
}

// TestRedirectsWithinTheAPIAreFollowed: a renamed repository answers 301 (reads) and
// 307 (writes) with its new address on the same host, as GitHub does.
func TestRedirectsWithinTheAPIAreFollowed(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(token)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		path, renamed := strings.CutPrefix(r.URL.Path, "/repos/acme/old-name/")
		if !renamed {
			return false
		}
		code := http.StatusMovedPermanently
		if r.Method != http.MethodGet {
			code = http.StatusTemporaryRedirect
		}
		http.Redirect(w, r, srv.URL+"/repos/acme/gitops/"+path+"?"+r.URL.RawQuery, code)
		return true
	}
	p, err := NewPublisher(Context{Token: token, Repository: "acme/old-name", APIURL: srv.URL, PR: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if how, err := p.Comment(context.Background(), Marker(nil), "body"); err != nil || how != "created" {
		t.Fatalf("%s %v", how, err)
	}
	if c := srv.Comments(7); len(c) != 1 || c[0].Body != Marker(nil)+"\nbody" {
		t.Fatalf("comments = %+v", c)
	}
}

// TestAbsoluteURLsOnOtherHostsGoWithoutTheToken: a URL a response hands drift (an
// upload URL, a Link header) may name any host; only the API's own origin gets the
// token.
func TestAbsoluteURLsOnOtherHostsGoWithoutTheToken(t *testing.T) {
	t.Parallel()
	other := githubtest.New(token)
	defer other.Close()
	srv := githubtest.New(token)
	defer srv.Close()
	p := publisher(t, srv)
	ctx := context.Background()
	for _, u := range []string{other.URL + "/uploads", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/uploads", srv.URL + "/user"} {
		req, err := p.client.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = p.client.Do(ctx, req, nil)
	}
	if got := authorized(other); len(got) != 0 {
		t.Errorf("another port got the token: %v", got)
	}
	if got := authorized(srv); len(got) != 1 || !strings.HasPrefix(got[0], "127.0.0.1:") || !strings.HasSuffix(got[0], " GET /user") {
		t.Errorf("the API host (and only under its own name) should get the token once, got %v", got)
	}
}

// TestMarkedCommentsOfOthersAreLeftAlone: someone posts a comment that starts with
// drift's marker and says all is well. drift does not take it over: it writes its
// own, and on the next push updates its own.
func TestMarkedCommentsOfOthersAreLeftAlone(t *testing.T) {
	t.Parallel()
	for _, impostor := range []githubtest.User{mallory, {Login: "github-actions", Type: "User"}, {Login: "github-actions-bot", Type: "User"}} {
		t.Run(impostor.Login, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(token)
			defer srv.Close()
			marker := Marker([]string{"web"})
			fake := marker + "\n### drift: no changes"
			id := srv.AddCommentBy(7, impostor, fake)
			p := publisher(t, srv)
			var warned []string
			p.Warn = func(m string) { warned = append(warned, m) }
			ctx := context.Background()
			for _, body := range []string{"1 to delete", "2 to delete"} {
				if _, err := p.Comment(ctx, marker, body); err != nil {
					t.Fatal(err)
				}
			}
			c := srv.Comments(7)
			if len(c) != 2 || c[0].ID != id || c[0].Body != fake || c[0].User != impostor {
				t.Fatalf("the impostor's comment was touched: %+v", c)
			}
			if c[1].Body != marker+"\n2 to delete" || c[1].User != githubtest.ActionsBot {
				t.Fatalf("drift's own comment = %+v", c[1])
			}
			if len(warned) != 1 || !strings.Contains(warned[0], impostor.Login) {
				t.Errorf("warnings = %q", warned)
			}
		})
	}
}

// TestAuthorIsTheTokensUserOrTheActionsBot: a user's token writes as that user
// (GET /user); GITHUB_TOKEN, an installation token, is refused /user and writes as
// github-actions[bot]; a given author is taken as is. Comments of the other
// identities are not drift's.
func TestAuthorIsTheTokensUserOrTheActionsBot(t *testing.T) {
	t.Parallel()
	alice := githubtest.User{Login: "alice", Type: "User"}
	app := githubtest.User{Login: "deploy-app[bot]", Type: "Bot"}
	cases := []struct {
		name   string
		actor  githubtest.User
		author string // Context.Author
		want   string
		asked  int // GET /user requests
	}{
		{"user token", alice, "", "alice", 1},
		{"installation token", githubtest.ActionsBot, "", "github-actions[bot]", 1},
		{"another app, named", app, "deploy-app[bot]", "deploy-app[bot]", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(token)
			defer srv.Close()
			srv.Actor = c.actor
			marker := Marker(nil)
			for _, u := range []githubtest.User{alice, githubtest.ActionsBot, app} {
				srv.AddCommentBy(7, u, marker+"\nby "+u.Login)
			}
			p, err := NewPublisher(Context{Token: token, Repository: "acme/gitops", APIURL: srv.URL, PR: 7, Author: c.author}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if how, err := p.Comment(context.Background(), marker, "new"); err != nil || how != "updated" {
				t.Fatalf("%s %v", how, err)
			}
			for _, cm := range srv.Comments(7) {
				if edited := cm.Body == marker+"\nnew"; edited != (cm.User.Login == c.want) {
					t.Errorf("comment by %s: edited %t", cm.User.Login, edited)
				}
			}
			asked := 0
			for _, r := range srv.Requests {
				if r == "GET /user" {
					asked++
				}
			}
			if asked != c.asked {
				t.Errorf("GET /user asked %d times, want %d", asked, c.asked)
			}
		})
	}
}

// TestAnotherAppsTokenIsToldToNameItsAuthor: a GitHub App's installation token is
// refused /user like GITHUB_TOKEN but writes as its own bot; drift cannot know that
// login, so it says what to pass rather than take over comments it cannot attribute.
func TestAnotherAppsTokenIsToldToNameItsAuthor(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(token)
	defer srv.Close()
	srv.Actor = githubtest.User{Login: "deploy-app[bot]", Type: "Bot"}
	marker := Marker(nil)
	srv.AddCommentBy(7, srv.Actor, marker+"\nthe first run")
	p := publisher(t, srv)
	var warned []string
	p.Warn = func(m string) { warned = append(warned, m) }
	if _, err := p.Comment(context.Background(), marker, "second run"); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(warned, "\n"); !strings.Contains(w, "pass --github-author deploy-app[bot]") {
		t.Errorf("warnings = %q", warned)
	}
}

// TestDriftIssuesOfOthersAreLeftAlone: an issue someone else opened with drift's
// marker (and the label) is never updated, closed or reopened; drift keeps its own.
func TestDriftIssuesOfOthersAreLeftAlone(t *testing.T) {
	t.Parallel()
	for _, actor := range []githubtest.User{githubtest.ActionsBot, {Login: "alice", Type: "User"}} {
		t.Run(actor.Login, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(token)
			defer srv.Close()
			srv.Actor = actor
			marker := Marker([]string{"web"})
			label := []struct {
				Name string `json:"name"`
			}{{DriftLabel}}
			srv.Labels[DriftLabel] = true
			open := &githubtest.Issue{Number: 1, Title: "Drift", Body: marker + "\nno drift, nothing to see", State: "open", User: mallory, Labels: label}
			closed := &githubtest.Issue{Number: 2, Title: "Drift", Body: marker + "\nold", State: "closed", User: mallory, Labels: label}
			srv.Issues[1], srv.Issues[2] = open, closed
			before1, before2 := *open, *closed
			p := publisher(t, srv)
			ctx := context.Background()
			if how, err := p.DriftIssue(ctx, marker, "fp1", true, "Drift: 1 to modify", "report"); err != nil || how != "opened issue #3" {
				t.Fatalf("%s %v", how, err)
			}
			if how, err := p.DriftIssue(ctx, marker, "fp2", true, "Drift: 2 to modify", "report 2"); err != nil || how != "updated issue #3" {
				t.Fatalf("%s %v", how, err)
			}
			if how, err := p.DriftIssue(ctx, marker, "", false, "", ""); err != nil || how != "closed issue #3" {
				t.Fatalf("%s %v", how, err)
			}
			if srv.Issues[3].User != actor {
				t.Errorf("drift's issue was opened by %+v", srv.Issues[3].User)
			}
			if srv.Issues[1].Body != before1.Body || srv.Issues[1].State != "open" || srv.Issues[2].Body != before2.Body || srv.Issues[2].State != "closed" {
				t.Errorf("mallory's issues changed: %+v %+v", srv.Issues[1], srv.Issues[2])
			}
			if len(srv.Comments(1))+len(srv.Comments(2)) != 0 {
				t.Error("drift commented on mallory's issues")
			}
		})
	}
}
