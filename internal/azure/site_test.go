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

const (
	pat     = "pat-secret-token-value-0123456789abcdefghijklmnopq"
	headSHA = "0123456789abcdef0123456789abcdef01234567"
)

// site is a client of srv for pull request 7 whose waits fail the test.
func site(t *testing.T, srv *azuretest.Server, pr int64) *Site {
	t.Helper()
	return siteWaiting(t, srv, pr, func(_ context.Context, d time.Duration) error {
		t.Errorf("unexpected wait of %s", d)
		return nil
	})
}

func siteWaiting(t *testing.T, srv *azuretest.Server, pr int64, wait func(context.Context, time.Duration) error) *Site {
	t.Helper()
	s, err := open(forge.CI{Token: srv.Token, APIURL: srv.APIURL(), Repository: "shop/gitops", PR: pr, HeadSHA: headSHA}, nil, wait)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// marked are the threads of pull request 7 whose first comment carries marker.
func marked(srv *azuretest.Server, marker string) []azuretest.Thread {
	var out []azuretest.Thread
	for _, th := range srv.Threads(7) {
		if !th.IsDeleted && strings.HasPrefix(th.Comments[0].Content, marker) {
			out = append(out, th)
		}
	}
	return out
}

// TestTheCommentThreadIsUpdatedInPlaceAndClosed: on a pull request with reviews,
// Azure DevOps' system threads and another target set's report, two runs leave one
// drift thread, its first comment edited in place (PATCH of comment 1), created
// closed so that a comment-resolution policy does not wait on it; a deleted drift
// thread is written anew.
func TestTheCommentThreadIsUpdatedInPlaceAndClosed(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	for i := 0; i < 30; i++ {
		srv.AddThread(7, azuretest.Someone, fmt.Sprintf("review %d", i), false)
		srv.AddThread(7, azuretest.BuildService, "Policy status updated", true)
	}
	other := forge.Marker([]string{"other"})
	srv.AddThread(7, azuretest.BuildService, other+"\nanother target set", false)
	marker := forge.Marker([]string{"web"})
	ctx := context.Background()
	if how, err := forge.Upsert(ctx, site(t, srv, 7), marker, "first", "comment", nil); err != nil || how != "created" {
		t.Fatalf("%s %v", how, err)
	}
	srv.AddThread(7, azuretest.Someone, "later review", false)
	before := len(srv.Received)
	if how, err := forge.Upsert(ctx, site(t, srv, 7), marker, "second", "comment", nil); err != nil || how != "updated" {
		t.Fatalf("%s %v", how, err)
	}
	m := marked(srv, marker)
	if len(m) != 1 || m[0].Comments[0].Content != marker+"\nsecond" || m[0].Status != "closed" || m[0].Comments[0].Author != azuretest.BuildService {
		t.Fatalf("drift's threads = %+v", m)
	}
	last := srv.Received[len(srv.Received)-1]
	if want := fmt.Sprintf("/acme/shop/_apis/git/repositories/gitops/pullRequests/7/threads/%d/comments/1", m[0].ID); last.Method != http.MethodPatch || last.Path != want {
		t.Errorf("last request %s %s, want PATCH %s", last.Method, last.Path, want)
	}
	for _, r := range srv.Received[before:] {
		if r.Method == http.MethodPost {
			t.Errorf("the second run made something: %s %s", r.Method, r.Path)
		}
	}
	if o := marked(srv, other); len(o) != 1 || o[0].Comments[0].Content != other+"\nanother target set" {
		t.Errorf("the other target set's thread was touched: %+v", o)
	}
	srv.DeleteThread(7, m[0].ID)
	if how, err := forge.Upsert(ctx, site(t, srv, 7), marker, "third", "comment", nil); err != nil || how != "created" || len(marked(srv, marker)) != 1 {
		t.Fatalf("after deletion: %s %v", how, err)
	}
}

// TestMarkedThreadsOfOthersAreLeftAlone: a member starts a thread with drift's
// marker and the build service's display name for theirs; authors are told apart
// by identity id, so drift writes its own, warns naming the other's id, and updates
// its own next time.
func TestMarkedThreadsOfOthersAreLeftAlone(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	marker := forge.Marker([]string{"web"})
	impostor := azuretest.Identity{ID: "66666666-6666-4666-8666-666666666666", DisplayName: azuretest.BuildService.DisplayName, UniqueName: "mallory@acme.example"}
	fake := marker + "\n### drift: no changes"
	id := srv.AddThread(7, impostor, fake, false)
	var warned []string
	for _, body := range []string{"1 to delete", "2 to delete"} {
		if _, err := forge.Upsert(context.Background(), site(t, srv, 7), marker, body, "comment", func(m string) { warned = append(warned, m) }); err != nil {
			t.Fatal(err)
		}
	}
	th := srv.Threads(7)
	if len(th) != 2 || th[0].ID != id || th[0].Comments[0].Content != fake {
		t.Fatalf("the impostor's thread was touched: %+v", th)
	}
	if th[1].Comments[0].Content != marker+"\n2 to delete" || th[1].Comments[0].Author != azuretest.BuildService {
		t.Fatalf("drift's own = %+v", th[1])
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "written by "+impostor.ID+", not by "+azuretest.BuildService.ID) {
		t.Errorf("warnings = %q", warned)
	}
}

// TestStatusesOnThePullRequestOrTheCommit: in a pull request the status is the pull
// request's (genre drift, the name asked, failed or succeeded, the description cut,
// the run's page); outside one, a commit status on the head commit.
func TestStatusesOnThePullRequestOrTheCommit(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	link := "https://dev.azure.com/acme/shop/_build/results?buildId=12"
	if err := site(t, srv, 7).SetStatus(context.Background(), forge.Status{Name: "drift (web)", Failed: true, Description: strings.Repeat("é", 300), Link: link}); err != nil {
		t.Fatal(err)
	}
	if err := site(t, srv, 0).SetStatus(context.Background(), forge.Status{Description: "1 to add"}); err != nil {
		t.Fatal(err)
	}
	s := srv.Statuses
	if len(s) != 2 || s[0]["pr"] != 7 || s[0]["state"] != "failed" || s[0]["genre"] != "drift" || s[0]["name"] != "drift (web)" || s[0]["targetUrl"] != link {
		t.Fatalf("statuses = %+v", s)
	}
	if d := s[0]["description"].(string); len([]rune(d)) != MaxStatusDescription || !strings.HasSuffix(d, "...") {
		t.Errorf("description of %d characters", len([]rune(d)))
	}
	if s[1]["pr"] != 0 || s[1]["sha"] != headSHA || s[1]["state"] != "succeeded" || s[1]["name"] != "drift" || s[1]["targetUrl"] != "" {
		t.Errorf("commit status = %+v", s[1])
	}
}

// TestDriftWorkItemFlow: the drift work item is made as the process's type (Issue
// in Basic, Impediment in Scrum), tagged drift, its description Markdown; updated
// only when the fingerprint changes, closed to the type's Completed state with a
// Markdown comment, reopened to its first Proposed (else InProgress) state.
func TestDriftWorkItemFlow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		process, typ, open, reopened, closed string
	}{{"basic", "Issue", "To Do", "To Do", "Done"}, {"scrum", "Impediment", "Open", "Open", "Closed"}} {
		srv := azuretest.New(pat)
		if c.process == "scrum" {
			srv.Scrum()
		}
		// Not drift's: another tag, and one tagged drift-ish.
		srv.AddWorkItem(azuretest.Someone, c.typ, "unrelated", "x", "infra", c.open)
		srv.AddWorkItem(azuretest.Someone, c.typ, "unrelated", "x", "drifting", c.open)
		marker := forge.Marker([]string{"web"})
		steps := []struct {
			drift        bool
			fingerprint  string
			said, state  string
			writes, note int
		}{
			{false, "a", "nothing to do (no drift, no open issue)", "", 0, 0},
			{true, "a", "opened issue #3", c.open, 1, 0},
			{true, "a", "issue #3 is up to date (the drift did not change)", c.open, 0, 0},
			{true, "b", "updated issue #3", c.open, 1, 0},
			{false, "b", "closed issue #3", c.closed, 2, 1},
			{true, "c", "reopened issue #3", c.reopened, 1, 1},
		}
		for _, st := range steps {
			writes := srv.Writes
			said, err := forge.DriftIssue(context.Background(), site(t, srv, 0), "drift", marker, st.fingerprint, st.drift, "Drift: "+st.fingerprint, "body **"+st.fingerprint+"**", nil)
			if err != nil || said != st.said {
				t.Fatalf("%s: %q %v, want %q", c.process, said, err, st.said)
			}
			if got := srv.Writes - writes; got != st.writes {
				t.Errorf("%s, %q: %d writes, want %d", c.process, said, got, st.writes)
			}
			wi := srv.WorkItems[3]
			if st.state == "" {
				continue
			}
			if wi == nil || wi.Fields["System.WorkItemType"] != c.typ || wi.Fields["System.State"] != st.state || wi.Fields["System.Tags"] != "drift" ||
				wi.Formats["System.Description"] != "markdown" || wi.Fields["System.Title"] != "Drift: "+st.fingerprint ||
				!strings.HasPrefix(wi.Fields["System.Description"].(string), marker+"\n"+forge.FingerprintLine(st.fingerprint)) || len(wi.Comments) != st.note {
				t.Errorf("%s, %q: work item = %+v", c.process, said, wi)
			}
		}
		if cm := srv.WorkItems[3].Comments; len(cm) != 1 || cm[0].Format != "markdown" || !strings.Contains(cm[0].Text, "matches the repository again") {
			t.Errorf("%s: closing comment %+v", c.process, cm)
		}
		srv.Close()
	}
}

// TestWorkItemsOthersMadeAreNeverEdited: a work item tagged drift whose description
// starts with drift's marker, made by someone else, is neither updated nor closed.
func TestWorkItemsOthersMadeAreNeverEdited(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	marker := forge.Marker([]string{"web"})
	id := srv.AddWorkItem(azuretest.Someone, "Issue", "fake", marker+"\nall is well", "drift", "To Do")
	said, err := forge.DriftIssue(context.Background(), site(t, srv, 0), "drift", marker, "x", false, "Drift", "gone", nil)
	if err != nil || said != "nothing to do (no drift, no open issue)" {
		t.Fatalf("%q %v", said, err)
	}
	if said, err = forge.DriftIssue(context.Background(), site(t, srv, 0), "drift", marker, "x", true, "Drift", "real", nil); err != nil || said != fmt.Sprintf("opened issue #%d", id+1) {
		t.Fatalf("%q %v", said, err)
	}
	if wi := srv.WorkItems[id]; wi.Rev != 1 || wi.Fields["System.Description"] != marker+"\nall is well" || wi.Fields["System.State"] != "To Do" {
		t.Errorf("the other's work item was edited: %+v", wi)
	}
}

// TestWithoutBoardsDetectionSaysWhereTheReportIs: Boards turned off (404) or not
// open to the identity (403) is an error that says so, what to grant, and that the
// artifact and the status still hold the report; nothing is written.
func TestWithoutBoardsDetectionSaysWhereTheReportIs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		set  func(*azuretest.Server)
		code int
	}{{"boards off", func(s *azuretest.Server) { s.BoardsOff = true }, 404}, {"no permission", func(s *azuretest.Server) { s.NoBoardsPermission = true }, 403}} {
		srv := azuretest.New(pat)
		c.set(srv)
		_, err := forge.DriftIssue(context.Background(), site(t, srv, 0), "drift", forge.Marker(nil), "x", true, "Drift", "body", nil)
		if err == nil || StatusCode(err) != c.code || !strings.Contains(err.Error(), "Boards is turned off for the project \"shop\"") ||
			!strings.Contains(err.Error(), "detection's report is in the run's artifact and its result in the status") || strings.Contains(err.Error(), pat) {
			t.Errorf("%s: %v", c.name, err)
		}
		if srv.Writes != 0 {
			t.Errorf("%s: %d writes", c.name, srv.Writes)
		}
		srv.Close()
	}
}

// TestRefusalsSayWhatToDoAndHideTheToken: a wrong token (401), a read-only one
// (403, a fork's build) and an unknown repository (404) are explained, keep their
// status, and never quote the token, even as the Basic credential a server echoes.
func TestRefusalsSayWhatToDoAndHideTheToken(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	wrong, err := open(forge.CI{Token: "wrong-token", APIURL: srv.APIURL(), Repository: "shop/gitops", PR: 7}, nil, forge.Sleep)
	if err != nil {
		t.Fatal(err)
	}
	_, err = forge.Upsert(context.Background(), wrong, forge.Marker(nil), "body", "comment", nil)
	if StatusCode(err) != 401 || !strings.Contains(err.Error(), "wrong, expired or revoked") || !strings.Contains(err.Error(), "SYSTEM_ACCESSTOKEN: $(System.AccessToken)") {
		t.Errorf("wrong token: %v", err)
	}
	srv.ReadOnly = true
	_, err = forge.Upsert(context.Background(), site(t, srv, 7), forge.Marker(nil), "body", "comment", nil)
	if StatusCode(err) != 403 || !strings.Contains(err.Error(), "Contribute to pull requests") || !strings.Contains(err.Error(), "TF401027") {
		t.Errorf("read-only token: %v", err)
	}
	srv.ReadOnly = false
	other, _ := open(forge.CI{Token: pat, APIURL: srv.APIURL(), Repository: "shop/nope", PR: 7}, nil, forge.Sleep)
	if err := other.SetStatus(context.Background(), forge.Status{Description: "x"}); StatusCode(err) != 404 || !strings.Contains(err.Error(), "shop/nope") {
		t.Errorf("unknown repository: %v", err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte(":" + pat))
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"$id":"1","message":"bad header %s","typeKey":"ArgumentException"}`, r.Header.Get("Authorization"))
		return true
	}
	_, err = site(t, srv, 7).Self(context.Background())
	if err == nil || strings.Contains(err.Error(), pat) || strings.Contains(err.Error(), basic) || !strings.Contains(err.Error(), "***") {
		t.Errorf("echoed credential: %v", err)
	}
}

// TestACommentOverAzureDevOpsLimitIsTooLong: the stand-in refuses a comment over
// 150,000 characters (UTF-16 units) as Azure DevOps does, and TooLong reads that;
// another 400 is not too long.
func TestACommentOverAzureDevOpsLimitIsTooLong(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	// 75,001 characters outside the BMP are 150,002 UTF-16 units.
	_, err := site(t, srv, 7).CreateNote(context.Background(), strings.Repeat("🟢", 75001))
	if !TooLong(err) || StatusCode(err) != 400 {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := site(t, srv, 7).CreateNote(context.Background(), strings.Repeat("x", MaxNoteBytes)); err != nil {
		t.Errorf("MaxNoteBytes refused: %v", err)
	}
	if TooLong(&Error{Code: 400, msg: "The thread must contain at least one comment."}) || !TooLong(&Error{Code: 413}) {
		t.Error("another 400 or a 413 misread")
	}
}

// TestOnPremisesServesEveryAreaFromTheCollection: Azure DevOps Server answers
// _apis/ResourceAreas with an empty list; the collection URL serves git and wit.
func TestOnPremisesServesEveryAreaFromTheCollection(t *testing.T) {
	t.Parallel()
	srv := azuretest.New(pat)
	defer srv.Close()
	srv.OnPremises = true
	if _, err := forge.Upsert(context.Background(), site(t, srv, 7), forge.Marker(nil), "body", "comment", nil); err != nil || len(srv.Threads(7)) != 1 {
		t.Fatalf("%v %+v", err, srv.Threads(7))
	}
}
