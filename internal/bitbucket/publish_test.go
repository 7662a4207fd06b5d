package bitbucket

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/bitbucket/bitbuckettest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

const (
	token   = "secret-token-value"
	headSHA = "0123456789abcdef0123456789abcdef01234567"
)

var dialects = []struct {
	name string
	d    bitbuckettest.Dialect
}{{"cloud", bitbuckettest.Cloud}, {"data center", bitbuckettest.DataCenter}}

// ciOf is the CI of srv's pull request 7, as its repository access token's, with the
// author named where Cloud cannot say.
func ciOf(srv *bitbuckettest.Server) forge.CI {
	c := forge.CI{Token: token, APIURL: srv.APIURL(), Repository: srv.Owner + "/" + srv.Slug, PR: 7, HeadSHA: headSHA}
	if srv.Dialect == bitbuckettest.Cloud {
		c.Author = bitbuckettest.RepositoryBot.UUID
	}
	return c
}

// site opens srv's client whose waits fail the test: only the tests of waits expect
// any, and no test waits for real.
func site(t *testing.T, c forge.CI) forge.Site {
	t.Helper()
	return siteWaiting(t, c, func(_ context.Context, d time.Duration) error {
		t.Errorf("unexpected wait of %s", d)
		return nil
	})
}

func siteWaiting(t *testing.T, c forge.CI, wait func(context.Context, time.Duration) error) forge.Site {
	t.Helper()
	s, err := open(c, nil, wait)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// marked are drift's comments of marker among the pull request's.
func marked(srv *bitbuckettest.Server, marker string) []bitbuckettest.Comment {
	var out []bitbuckettest.Comment
	for _, c := range srv.Comments() {
		if strings.HasPrefix(show(c.Text), marker) {
			out = append(out, c)
		}
	}
	return out
}

// TestTwoRunsLeaveOneCommentUpdatedInPlace: on a busy pull request (review comments
// over several pages, comments on lines, another target set's drift comment), the
// second run finds drift's comment through the dialect's pagination and edits it:
// the same comment, no second one; after someone deletes it, the next run writes a
// new one.
func TestTwoRunsLeaveOneCommentUpdatedInPlace(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			srv := bitbuckettest.New(d.d, token)
			defer srv.Close()
			for i := range 230 {
				srv.AddComment(bitbuckettest.Someone, fmt.Sprintf("review comment %d", i))
			}
			srv.AddInlineComment(bitbuckettest.RepositoryBot, forge.Marker([]string{"web", "api"})+"\non a line")
			other := forge.Marker([]string{"other-target"})
			srv.AddComment(bitbuckettest.RepositoryBot, hide(other+"\nanother target set's report"))
			s := site(t, ciOf(srv))
			marker := forge.Marker([]string{"web", "api"})
			ctx := context.Background()
			if how, err := forge.Upsert(ctx, s, marker, "first", "comment", nil); err != nil || how != "created" {
				t.Fatalf("%s %v", how, err)
			}
			for i := range 150 {
				srv.AddComment(bitbuckettest.Someone, fmt.Sprintf("later comment %d", i))
			}
			m := marked(srv, marker)
			if len(m) != 2 || !m[0].Inline {
				t.Fatalf("drift's comments = %+v", m)
			}
			id := m[1].ID
			if how, err := forge.Upsert(ctx, site(t, ciOf(srv)), marker, "second", "comment", nil); err != nil || how != "updated" {
				t.Fatalf("%s %v", how, err)
			}
			m = marked(srv, marker)
			if len(m) != 2 || m[1].ID != id || show(m[1].Text) != marker+"\nsecond" || m[1].Author != bitbuckettest.RepositoryBot {
				t.Fatalf("drift's comments = %+v", m)
			}
			if !strings.HasPrefix(m[1].Text, "[//]: # (drift:report targets=") {
				t.Errorf("the marker is written as %q, which Bitbucket shows", strings.SplitN(m[1].Text, "\n", 2)[0])
			}
			if got := marked(srv, other); len(got) != 1 || show(got[0].Text) != other+"\nanother target set's report" {
				t.Error("the other target set's comment was touched")
			}
			pages := 0
			for _, r := range srv.Requests() {
				if strings.HasPrefix(r, "GET ") && (strings.HasSuffix(r, "/comments") || strings.HasSuffix(r, "/activities")) {
					pages++
				}
			}
			if pages < 6 {
				t.Errorf("%d pages read in two runs: the pagination was not followed", pages)
			}
			srv.DeleteComment(id)
			if how, err := forge.Upsert(ctx, site(t, ciOf(srv)), marker, "third", "comment", nil); err != nil || how != "created" || len(marked(srv, marker)) != 2 {
				t.Fatalf("after deletion: %s %v", how, err)
			}
		})
	}
}

// TestMarkedCommentsOfOthersAreLeftAlone: a member posts a comment that starts with
// drift's marker (in either form) and says all is well. drift does not take it over:
// it writes its own, warns naming the author, and next time updates its own.
func TestMarkedCommentsOfOthersAreLeftAlone(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			srv := bitbuckettest.New(d.d, token)
			defer srv.Close()
			marker := forge.Marker([]string{"web"})
			mallory := bitbuckettest.User{UUID: "{66666666-6666-6666-6666-666666666666}", Name: "mallory", DisplayName: "drift"}
			fakes := []string{marker + "\n### drift: no changes", hide(marker + "\n### drift: no changes")}
			var ids []int64
			for _, f := range fakes {
				ids = append(ids, srv.AddComment(mallory, f))
			}
			var warned []string
			for _, body := range []string{"1 to delete", "2 to delete"} {
				if _, err := forge.Upsert(context.Background(), site(t, ciOf(srv)), marker, body, "comment", func(m string) { warned = append(warned, m) }); err != nil {
					t.Fatal(err)
				}
			}
			c := srv.Comments()
			if len(c) != 3 || c[0].ID != ids[0] || c[0].Text != fakes[0] || c[1].Text != fakes[1] || c[0].Version != 0 {
				t.Fatalf("mallory's comments were touched: %+v", c)
			}
			if show(c[2].Text) != marker+"\n2 to delete" || c[2].Author != bitbuckettest.RepositoryBot {
				t.Fatalf("drift's own comment = %+v", c[2])
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "left alone 2 comment(s) that carry drift's marker") {
				t.Errorf("warnings = %q", warned)
			}
		})
	}
}

// TestBuildStatusOnTheHeadCommit: the status is set on the head commit, keyed by its
// name (one status per name, overwritten by later runs), failed or successful, its
// description cut, and its URL the link, else the run's page, else the pull
// request's (Cloud) or the commit's (Data Center) page, since both require one.
func TestBuildStatusOnTheHeadCommit(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			srv := bitbuckettest.New(d.d, token)
			defer srv.Close()
			c := ciOf(srv)
			ctx := context.Background()
			long := strings.Repeat("é", 300)
			if err := site(t, c).SetStatus(ctx, forge.Status{Name: "drift (shop-prod, web)", Failed: true, Description: long, Link: "https://ci.example/run/5"}); err != nil {
				t.Fatal(err)
			}
			if err := site(t, c).SetStatus(ctx, forge.Status{Description: "1 to add"}); err != nil {
				t.Fatal(err)
			}
			c.RunURL = "https://bitbucket.org/acme/gitops/pipelines/results/12"
			if err := site(t, c).SetStatus(ctx, forge.Status{Description: "2 to add"}); err != nil {
				t.Fatal(err)
			}
			st := srv.Statuses[headSHA]
			if len(st) != 2 {
				t.Fatalf("statuses = %+v", srv.Statuses)
			}
			part := st[statusKey("drift (shop-prod, web)")]
			if part == nil || part["state"] != "FAILED" || part["name"] != "drift (shop-prod, web)" || part["url"] != "https://ci.example/run/5" ||
				len([]rune(part["description"].(string))) != MaxStatusField || len(statusKey("drift (shop-prod, web)")) > 40 {
				t.Errorf("the part's status = %+v", part)
			}
			if own := st["drift"]; own["state"] != "SUCCESSFUL" || own["description"] != "2 to add" || own["url"] != c.RunURL {
				t.Errorf("drift's status = %+v", own)
			}
			c.RunURL = ""
			if err := site(t, c).SetStatus(ctx, forge.Status{Description: "3 to add"}); err != nil {
				t.Fatal(err)
			}
			want := srv.URL + "/acme/gitops/pull-requests/7"
			if d.d == bitbuckettest.DataCenter {
				want = srv.URL + "/projects/GIT/repos/gitops/commits/" + headSHA
			}
			if got := srv.Statuses[headSHA]["drift"]["url"]; got != want {
				t.Errorf("url without a link = %v, want %s", got, want)
			}
			c.HeadSHA = ""
			if err := site(t, c).SetStatus(ctx, forge.Status{}); err == nil || !strings.Contains(err.Error(), "head commit is unknown") {
				t.Errorf("no head: %v", err)
			}
		})
	}
}

// TestDriftIssueFollowsTheDriftOnCloud: the issue is opened, left alone while the
// fingerprint holds, updated when it changes, closed (resolved) with a comment,
// reopened; nothing is written when nothing changed.
func TestDriftIssueFollowsTheDriftOnCloud(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer srv.Close()
	marker := forge.Marker([]string{"web"})
	ctx := context.Background()
	steps := []struct {
		drift       bool
		fingerprint string
		said, state string
		writes      int
	}{
		{false, "a", "nothing to do (no drift, no open issue)", "", 0},
		{true, "a", "opened issue #1", "new", 1},
		{true, "a", "issue #1 is up to date (the drift did not change)", "new", 0},
		{true, "b", "updated issue #1", "new", 1},
		{false, "b", "closed issue #1", "resolved", 2},
		{true, "c", "reopened issue #1", "open", 2},
	}
	for _, s := range steps {
		writes := srv.Writes
		said, err := forge.DriftIssue(ctx, site(t, ciOf(srv)), "drift", marker, s.fingerprint, s.drift, "Drift: "+s.fingerprint, "body "+s.fingerprint, nil)
		if err != nil || said != s.said {
			t.Fatalf("%q %v, want %q", said, err, s.said)
		}
		if got := srv.Writes - writes; got != s.writes {
			t.Errorf("%q: %d writes, want %d", said, got, s.writes)
		}
		if is := srv.Issues[1]; s.state != "" && (is == nil || is.State != s.state || is.Reporter != bitbuckettest.RepositoryBot ||
			!strings.HasPrefix(show(is.Content), marker+"\n"+forge.FingerprintLine(is.Title[len("Drift: "):])) || strings.Contains(is.Content, "<!--")) {
			t.Errorf("%q: issue = %+v", said, is)
		}
	}
	if c := srv.Issues[1].Comments; len(c) != 1 || !strings.Contains(c[0], "matches the repository again") {
		t.Errorf("closing comment: %q", c)
	}
}

// TestIssuesOpenedByOthersAreNeverEdited: an issue with drift's marker that someone
// else reported is neither updated nor closed; drift opens its own.
func TestIssuesOpenedByOthersAreNeverEdited(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer srv.Close()
	srv.Tokens["someone@example.com:api-token"] = bitbuckettest.Token{User: bitbuckettest.Someone, Scopes: bitbuckettest.AllScopes}
	marker := forge.Marker([]string{"web"})
	theirs := ciOf(srv)
	theirs.Token, theirs.Author = "someone@example.com:api-token", ""
	if _, err := site(t, theirs).CreateIssue(context.Background(), "fake", marker+"\nall is well", "drift"); err != nil {
		t.Fatal(err)
	}
	if said, err := forge.DriftIssue(context.Background(), site(t, ciOf(srv)), "drift", marker, "x", true, "Drift", "real", nil); err != nil || said != "opened issue #2" {
		t.Fatalf("%q %v", said, err)
	}
	if is := srv.Issues[1]; show(is.Content) != marker+"\nall is well" || is.State != "new" {
		t.Errorf("the other's issue was edited: %+v", is)
	}
}

// TestWithoutAnIssueTrackerDetectionSaysWhatRemains: a Cloud repository without its
// tracker answers 404 to issues, and Data Center has none; either way the error says
// so, and what detection still gives, without a request to write anything.
func TestWithoutAnIssueTrackerDetectionSaysWhatRemains(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		srv := bitbuckettest.New(d.d, token)
		srv.IssueTracker = false
		_, err := forge.DriftIssue(context.Background(), site(t, ciOf(srv)), "drift", forge.Marker(nil), "x", true, "Drift", "body", nil)
		srv.Close()
		want := "has no issue tracker"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--bitbucket-issue") || srv.Writes != 0 {
			t.Errorf("%s: %v (%d writes)", d.name, err, srv.Writes)
		}
		if d.d == bitbuckettest.Cloud && StatusCode(err) != http.StatusNotFound {
			t.Errorf("cloud: status %d", StatusCode(err))
		}
	}
}
