package gitea

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/gitea/giteatest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

const (
	token   = "gitea-secret-token-value"
	headSHA = "0123456789abcdef0123456789abcdef01234567"
)

// site is a client of srv for pull request pr whose waits fail the test: only the
// tests of waits expect any, and no test waits for real.
func site(t *testing.T, srv *giteatest.Server, pr int64) *Site {
	t.Helper()
	return siteWaiting(t, srv, forge.CI{Token: token, PR: pr}, func(_ context.Context, d time.Duration) error {
		t.Errorf("unexpected wait of %s", d)
		return nil
	})
}

func siteWaiting(t *testing.T, srv *giteatest.Server, ci forge.CI, wait func(context.Context, time.Duration) error) *Site {
	t.Helper()
	ci.APIURL = srv.URL + "/api/v1"
	if ci.Repository == "" {
		ci.Repository = "acme/gitops"
	}
	if ci.HeadSHA == "" {
		ci.HeadSHA = headSHA
	}
	s, err := open(ci, nil, wait)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// marked lists the comments of pr that carry marker.
func marked(srv *giteatest.Server, pr int64, marker string) []giteatest.Comment {
	var out []giteatest.Comment
	for _, c := range srv.Comments(pr) {
		if strings.HasPrefix(c.Body, marker) {
			out = append(out, c)
		}
	}
	return out
}

// TestTwoRunsLeaveOneCommentUpdatedInPlace: on a busy pull request (reviews, another
// target set's drift comment, and a comment someone else wrote with drift's marker),
// the first run creates drift's comment and the second edits that one in place;
// someone's marked comment is left as it was, with a warning that names its author.
func TestTwoRunsLeaveOneCommentUpdatedInPlace(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	pr := srv.AddPullRequest(giteatest.Someone, "bump nginx")
	marker := forge.Marker([]string{"web", "api"})
	for i := 0; i < 120; i++ {
		srv.AddComment(pr, giteatest.Someone, fmt.Sprintf("review comment %d", i))
	}
	forged := srv.AddComment(pr, giteatest.Someone, marker+"\nall clear, merge it")
	other := forge.Marker([]string{"other-target"})
	srv.AddComment(pr, giteatest.Bot, other+"\nanother target set's report")
	s := site(t, srv, pr)
	var warnings []string
	warn := func(m string) { warnings = append(warnings, m) }
	ctx := context.Background()
	if how, err := forge.Upsert(ctx, s, marker, "first", Kind.Note, warn); err != nil || how != "created" {
		t.Fatalf("%s %v", how, err)
	}
	mine := marked(srv, pr, marker)
	if len(mine) != 2 || mine[1].User.Login != giteatest.Bot.Login || mine[1].Body != marker+"\nfirst" {
		t.Fatalf("after the first run: %+v", mine)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "someone") || !strings.Contains(warnings[0], "drift-bot") {
		t.Errorf("warnings = %q", warnings)
	}
	before := len(srv.Requests())
	if how, err := forge.Upsert(ctx, s, marker, "second", Kind.Note, warn); err != nil || how != "updated" {
		t.Fatalf("%s %v", how, err)
	}
	after := marked(srv, pr, marker)
	if len(after) != 2 || after[1].ID != mine[1].ID || after[1].Body != marker+"\nsecond" {
		t.Fatalf("after the second run: %+v", after)
	}
	if after[0].ID != forged || after[0].Body != marker+"\nall clear, merge it" {
		t.Errorf("someone's marked comment was changed: %+v", after[0])
	}
	want := []string{"GET /api/v1/repos/acme/gitops/issues/1/comments", fmt.Sprintf("PATCH /api/v1/repos/acme/gitops/issues/comments/%d", mine[1].ID)}
	if got := srv.Requests()[before:]; !slices.Equal(got, want) {
		t.Errorf("second run's requests = %q, want %q (the list whole, then one edit)", got, want)
	}
	if n := len(srv.Comments(pr)); n != 123 {
		t.Errorf("%d comments, want 123", n)
	}
}

// TestOnlySomeoneElsesMarkedCommentMeansANewOne: a run
// whose only marked comment is someone else's creates drift's own beside it, even
// though Gitea would let drift's token edit it.
func TestOnlySomeoneElsesMarkedCommentMeansANewOne(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	pr := srv.AddPullRequest(giteatest.Someone, "change")
	marker := forge.Marker(nil)
	id := srv.AddComment(pr, giteatest.Someone, marker+"\n<img src=x>")
	if how, err := forge.Upsert(context.Background(), site(t, srv, pr), marker, "report", Kind.Note, nil); err != nil || how != "created" {
		t.Fatalf("%s %v", how, err)
	}
	c := srv.Comments(pr)
	if len(c) != 2 || c[0].ID != id || c[0].Body != marker+"\n<img src=x>" || c[1].Body != marker+"\nreport" {
		t.Fatalf("comments = %+v", c)
	}
	for _, r := range srv.Received {
		if r.Method == http.MethodPatch {
			t.Errorf("a comment was edited: %+v", r)
		}
	}
}

// TestStatusIsSetOnTheHeadCommit: the status goes on the head commit with its state,
// context, description and link as given; a commit the repository does not hold is
// an error that says so.
func TestStatusIsSetOnTheHeadCommit(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	srv.AddCommit(headSHA)
	pr := srv.AddPullRequest(giteatest.Someone, "change")
	s := site(t, srv, pr)
	ctx := context.Background()
	link := srv.URL + "/acme/gitops/actions/runs/12"
	if err := s.SetStatus(ctx, forge.Status{Name: "drift (web)", Failed: true, Description: "1 to add, 2 errors", Link: link}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, forge.Status{Description: "no changes"}); err != nil {
		t.Fatal(err)
	}
	want := []giteatest.Status{
		{SHA: headSHA, State: "failure", Context: "drift (web)", Description: "1 to add, 2 errors", TargetURL: link},
		{SHA: headSHA, State: "success", Context: "drift", Description: "no changes"},
	}
	if len(srv.Statuses) != 2 {
		t.Fatalf("statuses = %+v", srv.Statuses)
	}
	for i, w := range want {
		got := srv.Statuses[i]
		if got.SHA != w.SHA || got.State != w.State || got.Context != w.Context || got.Description != w.Description || got.TargetURL != w.TargetURL {
			t.Errorf("status %d = %+v, want %+v", i, got, w)
		}
	}
	other := siteWaiting(t, srv, forge.CI{Token: token, PR: pr, HeadSHA: strings.Repeat("f", 40)}, nil)
	err := other.SetStatus(ctx, forge.Status{Name: "drift"})
	if err == nil || StatusCode(err) != http.StatusInternalServerError || !strings.Contains(err.Error(), "does not hold the commit") {
		t.Errorf("a commit the repository lacks: %v", err)
	}
	none := siteWaiting(t, srv, forge.CI{Token: token, PR: pr, HeadSHA: "-"}, nil)
	none.ci.HeadSHA = ""
	if err := none.SetStatus(ctx, forge.Status{}); err == nil || !strings.Contains(err.Error(), "--gitea-sha") {
		t.Errorf("no head commit: %v", err)
	}
}

// TestDriftIssueFollowsTheDrift: among a page and more of labelled issues, the drift
// issue is opened with the label (created once, given by ID), left alone while the
// fingerprint holds, updated when it changes, closed with a comment when the drift
// is gone and reopened when it is back. Someone else's issue with the marker is never
// touched.
func TestDriftIssueFollowsTheDrift(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	marker := forge.Marker([]string{"prod"})
	forged := srv.AddIssue(giteatest.Someone, "drift", marker+"\nclose me", "drift")
	for i := 0; i < 60; i++ {
		srv.AddIssue(giteatest.Someone, fmt.Sprintf("older drift %d", i), "not drift's", "drift")
	}
	srv.Labels = nil // the label is gone, its issues keep it
	s := site(t, srv, 0)
	ctx := context.Background()
	step := func(fp string, drift bool, want string) {
		t.Helper()
		how, err := forge.DriftIssue(ctx, s, DriftLabel, marker, fp, drift, "drift in prod", "body "+fp, nil)
		if err != nil || !strings.HasPrefix(how, want) {
			t.Fatalf("%s: %q %v", want, how, err)
		}
	}
	step("a", true, "opened issue #62")
	is := srv.Issues[62]
	if is.User.Login != giteatest.Bot.Login || is.State != "open" || len(is.Labels) != 1 || is.Labels[0].Name != "drift" || len(srv.Labels) != 1 {
		t.Fatalf("opened: %+v, labels %+v", is, srv.Labels)
	}
	writes := srv.Writes
	step("a", true, "issue #62 is up to date")
	if srv.Writes != writes {
		t.Errorf("an unchanged drift wrote %d times", srv.Writes-writes)
	}
	step("b", true, "updated issue #62")
	if !strings.Contains(srv.Issues[62].Body, FingerprintOf("b")) {
		t.Errorf("body = %q", srv.Issues[62].Body)
	}
	step("", false, "closed issue #62")
	if srv.Issues[62].State != "closed" || len(srv.Comments(62)) != 1 {
		t.Errorf("closed: %+v, comments %+v", srv.Issues[62], srv.Comments(62))
	}
	step("c", true, "reopened issue #62")
	if srv.Issues[62].State != "open" || !strings.Contains(srv.Issues[62].Body, FingerprintOf("c")) {
		t.Errorf("reopened: %+v", srv.Issues[62])
	}
	if f := srv.Issues[forged]; f.State != "open" || f.Body != marker+"\nclose me" || len(srv.Comments(forged)) != 0 {
		t.Errorf("someone's marked issue was touched: %+v", f)
	}
	if len(srv.Labels) != 1 {
		t.Errorf("labels = %+v, want one drift label", srv.Labels)
	}
	var pages int
	for _, r := range srv.Received {
		if r.Method == http.MethodGet && r.Path == "/api/v1/repos/acme/gitops/issues" {
			if !strings.Contains(r.Query, "labels=drift") || !strings.Contains(r.Query, "state=all") || !strings.Contains(r.Query, "type=issues") || !strings.Contains(r.Query, "limit=50") {
				t.Errorf("issue list query %q", r.Query)
			}
			pages++
		}
	}
	if pages < 10 {
		t.Errorf("%d issue list requests for 5 runs over 62 issues: pages were not followed", pages)
	}
}

// FingerprintOf is the fingerprint line a drift issue's body carries.
func FingerprintOf(fp string) string { return forge.FingerprintLine(fp) }

// TestTheLabelIsFoundOnALaterPage: a repository with more labels than a page finds
// its drift label by following Gitea's Link header, and makes no second one.
func TestTheLabelIsFoundOnALaterPage(t *testing.T) {
	t.Parallel()
	srv := giteatest.New(token)
	defer srv.Close()
	for i := 0; i < 75; i++ {
		srv.AddIssue(giteatest.Someone, "x", "", fmt.Sprintf("area/%d", i))
	}
	srv.AddIssue(giteatest.Someone, "x", "", "drift")
	s := site(t, srv, 0)
	if err := s.EnsureLabel(context.Background(), DriftLabel); err != nil {
		t.Fatal(err)
	}
	if len(srv.Labels) != 76 {
		t.Errorf("%d labels, want 76 (none created)", len(srv.Labels))
	}
	if id, _ := s.labelID(context.Background(), DriftLabel); id != 76 {
		t.Errorf("label ID %d, want 76", id)
	}
}
