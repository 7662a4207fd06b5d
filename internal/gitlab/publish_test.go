package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/drift-gitops/drift/internal/gitlab/gitlabtest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

const (
	token   = "glpat-secret-token-value"
	headSHA = "0123456789abcdef0123456789abcdef01234567"
)

// publisher is a client of srv for merge request 7 whose waits fail the test: only
// the tests of waits expect any, and no test waits for real.
func publisher(t *testing.T, srv *gitlabtest.Server) *Publisher {
	t.Helper()
	return publisherWaiting(t, srv, func(_ context.Context, d time.Duration) error {
		t.Errorf("unexpected wait of %s", d)
		return nil
	})
}

func publisherWaiting(t *testing.T, srv *gitlabtest.Server, wait func(context.Context, time.Duration) error) *Publisher {
	t.Helper()
	p, err := newPublisher(Context{Token: token, Project: "42", MR: 7, APIURL: srv.URL + "/api/v4", HeadSHA: headSHA, PipelineID: 900}, nil, wait)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// drift's notes among a merge request's.
func marked(srv *gitlabtest.Server, marker string) []gitlabtest.Note {
	var out []gitlabtest.Note
	for _, n := range srv.Notes(7) {
		if strings.HasPrefix(n.Body, marker) {
			out = append(out, n)
		}
	}
	return out
}

// TestNoteOnPageFiveIsUpdatedInPlace: a busy merge request (review notes, GitLab's
// system notes, another target set's drift note) has drift's note on the fifth page
// of a hundred; the next run finds it there, through GitLab's pagination, and edits
// it: the same note, no second one, and no page after the one it is on is read.
func TestNoteOnPageFiveIsUpdatedInPlace(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	for i := 0; i < 420; i++ {
		srv.AddNote(7, gitlabtest.Someone, fmt.Sprintf("review note %d", i), i%3 == 0)
	}
	other := forge.Marker([]string{"other-target"})
	srv.AddNote(7, gitlabtest.ProjectBot, other+"\nanother target set's report", false)
	p := publisher(t, srv)
	marker := forge.Marker([]string{"web", "api"})
	ctx := context.Background()
	if how, err := p.Comment(ctx, marker, "first"); err != nil || how != "created" {
		t.Fatalf("%s %v", how, err)
	}
	for i := 0; i < 150; i++ {
		srv.AddNote(7, gitlabtest.Someone, fmt.Sprintf("later note %d", i), false)
	}
	id := marked(srv, marker)[0].ID
	before := len(srv.Requests())
	if how, err := p.Comment(ctx, marker, "second"); err != nil || how != "updated" {
		t.Fatalf("%s %v", how, err)
	}
	m := marked(srv, marker)
	if len(m) != 1 || m[0].ID != id || m[0].Body != marker+"\nsecond" || m[0].Author != gitlabtest.ProjectBot {
		t.Fatalf("drift's notes = %+v", m)
	}
	var pages []string
	for _, r := range srv.Received[before:] {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/notes") {
			pages = append(pages, r.Path)
		}
	}
	if len(pages) != 5 {
		t.Errorf("read %d pages of notes, want the 5 up to drift's", len(pages))
	}
	if put := srv.Received[len(srv.Received)-1]; put.Method != http.MethodPut || put.Path != fmt.Sprintf("/api/v4/projects/42/merge_requests/7/notes/%d", id) {
		t.Errorf("last request = %s %s, want the note's update", put.Method, put.Path)
	}
	if len(marked(srv, other)) != 1 || marked(srv, other)[0].Body != other+"\nanother target set's report" {
		t.Error("the other target set's note was touched")
	}
	srv.DeleteNote(7, id)
	if how, err := p.Comment(ctx, marker, "third"); err != nil || how != "created" || len(marked(srv, marker)) != 1 {
		t.Fatalf("after deletion: %s %v", how, err)
	}
}

// TestMarkedNotesOfOthersAreLeftAlone: a member posts a note that starts with drift's
// marker and says all is well. drift does not take it over: it writes its own, warns
// naming the author, and on the next push updates its own.
func TestMarkedNotesOfOthersAreLeftAlone(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	marker := forge.Marker([]string{"web"})
	mallory := gitlabtest.User{ID: 66, Username: "mallory", Name: "Mallory", State: "active"}
	fake := marker + "\n### drift: no changes"
	id := srv.AddNote(7, mallory, fake, false)
	p := publisher(t, srv)
	var warned []string
	p.Warn = func(m string) { warned = append(warned, m) }
	for _, body := range []string{"1 to delete", "2 to delete"} {
		if _, err := p.Comment(context.Background(), marker, body); err != nil {
			t.Fatal(err)
		}
	}
	n := srv.Notes(7)
	if len(n) != 2 || n[0].ID != id || n[0].Body != fake || n[0].Author != mallory {
		t.Fatalf("mallory's note was touched: %+v", n)
	}
	if n[1].Body != marker+"\n2 to delete" || n[1].Author != gitlabtest.ProjectBot {
		t.Fatalf("drift's own note = %+v", n[1])
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "left alone 1 note(s) that carry drift's marker but were written by mallory, not by "+gitlabtest.ProjectBot.Username) {
		t.Errorf("warnings = %q", warned)
	}
}

// TestCommitStatusOnTheHead: the status is set on the head commit in the running
// pipeline, named as asked, failed or success, with the description cut to GitLab's
// 255 characters and the report's URL.
func TestCommitStatusOnTheHead(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	srv.AddPipeline(900, headSHA, "refs/merge-requests/7/head", "drift-diff")
	p := publisher(t, srv)
	long := strings.Repeat("é", 300)
	if err := p.Status(context.Background(), "drift (web)", true, long, "https://gitlab.example/acme/gitops/-/jobs/5/artifacts/file/drift/report.html"); err != nil {
		t.Fatal(err)
	}
	if err := p.Status(context.Background(), "", false, "1 to add", ""); err != nil {
		t.Fatal(err)
	}
	s := srv.Statuses
	if len(s) != 2 || s[0]["sha"] != headSHA || s[0]["state"] != "failed" || s[0]["name"] != "drift (web)" || s[0]["pipeline_id"] != float64(900) ||
		s[0]["target_url"] != "https://gitlab.example/acme/gitops/-/jobs/5/artifacts/file/drift/report.html" {
		t.Fatalf("statuses = %+v", s)
	}
	if d := s[0]["description"].(string); len([]rune(d)) != 255 || !strings.HasSuffix(d, "...") {
		t.Errorf("description of %d characters", len([]rune(d)))
	}
	if s[1]["state"] != "success" || s[1]["name"] != "drift" || s[1]["target_url"] != nil {
		t.Errorf("second status = %+v", s[1])
	}
}

// TestDriftIssueFlowAndItsLabel: the issue is opened with the label, created first
// when the project lacks it (and only used when it has it), updated, closed with a
// note, reopened, through GitLab's state events; nothing is written when nothing
// changed.
func TestDriftIssueFlowAndItsLabel(t *testing.T) {
	t.Parallel()
	for _, hasLabel := range []bool{false, true} {
		srv := gitlabtest.New(token)
		if hasLabel {
			srv.Labels[DriftLabel] = true
		}
		p := publisher(t, srv)
		marker := forge.Marker([]string{"web"})
		ctx := context.Background()
		steps := []struct {
			drift          bool
			fingerprint    string
			said           string
			state          string
			writes, labels int
		}{
			{false, "a", "nothing to do (no drift, no open issue)", "", 0, 0},
			{true, "a", "opened issue #1", "opened", 1, 1},
			{true, "a", "issue #1 is up to date (the drift did not change)", "opened", 0, 0},
			{true, "b", "updated issue #1", "opened", 1, 0},
			{false, "b", "closed issue #1", "closed", 2, 0},
			{true, "c", "reopened issue #1", "opened", 1, 0},
		}
		for _, s := range steps {
			writes := srv.Writes
			labelsAsked := countLabelPosts(srv)
			said, err := p.DriftIssue(ctx, marker, s.fingerprint, s.drift, "Drift: "+s.fingerprint, "body "+s.fingerprint)
			if err != nil || said != s.said {
				t.Fatalf("label %t: %q %v, want %q", hasLabel, said, err, s.said)
			}
			wantLabels := s.labels
			if hasLabel {
				wantLabels = 0
			}
			if got := srv.Writes - writes - (countLabelPosts(srv) - labelsAsked); got != s.writes || countLabelPosts(srv)-labelsAsked != wantLabels {
				t.Errorf("label %t, %q: %d writes and %d label creations, want %d and %d", hasLabel, said, got, countLabelPosts(srv)-labelsAsked, s.writes, wantLabels)
			}
			if is := srv.Issues[1]; s.state != "" && (is == nil || is.State != s.state || !slices.Equal(is.Labels, []string{DriftLabel}) ||
				!strings.HasPrefix(is.Description, marker+"\n"+forge.FingerprintLine(is.Title[len("Drift: "):]))) {
				t.Errorf("label %t, %q: issue = %+v", hasLabel, said, is)
			}
		}
		if n := srv.IssueNotes[1]; len(n) != 1 || !strings.Contains(n[0].Body, "matches the repository again") {
			t.Errorf("closing note: %+v", n)
		}
		srv.Close()
	}
}

func countLabelPosts(srv *gitlabtest.Server) int {
	n := 0
	for _, r := range srv.Received {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/labels") {
			n++
		}
	}
	return n
}

// TestIssuesOpenedByOthersAreNeverEdited: an issue with drift's marker and label that
// someone else opened is neither updated nor closed; drift opens its own.
func TestIssuesOpenedByOthersAreNeverEdited(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	marker := forge.Marker([]string{"web"})
	srv.Actor = gitlabtest.Someone
	p := publisher(t, srv)
	if _, err := p.CreateIssue(context.Background(), "fake", marker+"\nall is well", DriftLabel); err != nil {
		t.Fatal(err)
	}
	srv.Actor = gitlabtest.ProjectBot
	p = publisher(t, srv)
	if said, err := p.DriftIssue(context.Background(), marker, "x", true, "Drift", "real"); err != nil || said != "opened issue #2" {
		t.Fatalf("%q %v", said, err)
	}
	if is := srv.Issues[1]; is.Description != marker+"\nall is well" || is.State != "opened" {
		t.Errorf("the other's issue was edited: %+v", is)
	}
}

// TestAStatusLinkGitLabWouldRefuseFallsBack: GitLab refuses a status whose link is
// over 255 characters (400), so a report's URL that long gives way to the next link
// (the job), and with none short enough the status has no link; a description over
// 255 characters is cut, never refused.
func TestAStatusLinkGitLabWouldRefuseFallsBack(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	srv.AddPipeline(900, headSHA, "refs/merge-requests/7/head")
	job := "https://gitlab.example/acme/gitops/-/jobs/5"
	long := job + "/artifacts/file/" + strings.Repeat("reports/", 30) + "report.html"
	fits := job + "/artifacts/file/" + strings.Repeat("r", MaxStatusField-len(job+"/artifacts/file/report.html")) + "report.html" // 255 characters
	// The stand-in refuses what GitLab refuses.
	if _, _, err := publisher(t, srv).client.Commits.SetCommitStatus("42", headSHA, &gl.SetCommitStatusOptions{State: gl.Success, TargetURL: &long}); StatusCode(err) != http.StatusBadRequest ||
		!strings.Contains(err.Error(), "is too long (maximum is 255 characters)") {
		t.Fatalf("a link of %d characters: %v", len(long), err)
	}
	for _, c := range []struct {
		links []string
		want  any
	}{
		{[]string{long, job}, job},
		{[]string{fits, job}, fits},
		{[]string{long, long + "/x"}, nil},
	} {
		before := len(srv.Statuses)
		if err := publisher(t, srv).Status(context.Background(), "drift", false, strings.Repeat("x", 300), c.links...); err != nil {
			t.Fatal(err)
		}
		st := srv.Statuses[before:]
		if len(st) != 1 || st[0]["target_url"] != c.want || len([]rune(st[0]["description"].(string))) != MaxStatusField {
			t.Errorf("links of %d characters: statuses %+v, want the link %v", len(c.links[0]), st, c.want)
		}
	}
}

// TestStatusesGoIntoTheRunningPipelineOnlyForItsCommit: GitLab adds a status to the
// pipeline given only when that pipeline runs the commit (else 404, "Pipeline for
// pipeline_id, sha and ref Not Found"): drift's error then says why. A status named
// as a job of the pipeline is refused (400, the name has already been taken), and
// drift says what to rename; the token is in neither message.
func TestStatusesGoIntoTheRunningPipelineOnlyForItsCommit(t *testing.T) {
	t.Parallel()
	srv := gitlabtest.New(token)
	defer srv.Close()
	srv.AddPipeline(900, "feedfacefeedfacefeedfacefeedfacefeedface", "refs/merge-requests/7/merge", "drift")
	err := publisher(t, srv).Status(context.Background(), "", false, "1 to add")
	if StatusCode(err) != http.StatusNotFound || !strings.Contains(err.Error(), "on "+headSHA+" in pipeline 900 (404): GitLab adds a status to a pipeline only for the commit that pipeline runs") {
		t.Errorf("a commit pipeline 900 does not run: %v", err)
	}
	srv.AddPipeline(900, headSHA, "refs/merge-requests/7/merge", "drift", "drift-diff")
	err = publisher(t, srv).Status(context.Background(), "", false, "1 to add")
	if StatusCode(err) != http.StatusBadRequest || !strings.Contains(err.Error(), `GitLab refused the commit status "drift" (400, the name has already been taken): a job of pipeline 900 has that name`) ||
		!strings.Contains(err.Error(), "--gitlab-status=false") || strings.Contains(err.Error(), token) {
		t.Errorf("a status named as a job: %v", err)
	}
	if len(srv.Statuses) != 0 {
		t.Errorf("statuses = %+v", srv.Statuses)
	}
	if err := publisher(t, srv).Status(context.Background(), "drift (web)", false, "1 to add"); err != nil || len(srv.Statuses) != 1 || srv.Statuses[0]["pipeline_id"] != float64(900) {
		t.Errorf("another name: %v %+v", err, srv.Statuses)
	}
}
