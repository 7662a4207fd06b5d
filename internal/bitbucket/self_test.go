package bitbucket

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/bitbucket/bitbuckettest"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// TestCloudSelfFromTheUserOrTheAuthorVariable: an API token sent with its account
// (HTTP Basic) learns its user from GET /2.0/user; an access token, which Bitbucket
// Cloud refuses there, is told by DRIFT_BITBUCKET_AUTHOR, in braces or not; without
// it, the error says what to set and names the UUIDs of the marked comments' users.
func TestCloudSelfFromTheUserOrTheAuthorVariable(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer srv.Close()
	srv.Tokens["ann@example.com:ATATT-api-token"] = bitbuckettest.Token{User: bitbuckettest.Someone, Scopes: bitbuckettest.AllScopes}
	c := ciOf(srv)
	c.Token, c.Author = "ann@example.com:ATATT-api-token", ""
	if self, err := site(t, c).Self(context.Background()); err != nil || self != bitbuckettest.Someone.UUID {
		t.Errorf("basic: %q %v", self, err)
	}
	if r := srv.Received[len(srv.Received)-1]; r.Path != "/2.0/user" || !strings.HasPrefix(r.Authorization, "Basic ") {
		t.Errorf("asked %+v", r)
	}
	c = ciOf(srv)
	c.Author = strings.Trim(strings.ToUpper(bitbuckettest.RepositoryBot.UUID), "{}")
	if self, err := site(t, c).Self(context.Background()); err != nil || self != bitbuckettest.RepositoryBot.UUID {
		t.Errorf("author: %q %v", self, err)
	}
	marker := forge.Marker(nil)
	srv.AddComment(bitbuckettest.RepositoryBot, hide(marker+"\nbody"))
	c.Author = ""
	_, err := forge.Upsert(context.Background(), site(t, c), marker, "body", "comment", nil)
	if err == nil || StatusCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), AuthorVariable) ||
		!strings.Contains(err.Error(), bitbuckettest.RepositoryBot.UUID+` ("drift")`) || strings.Contains(err.Error(), token) {
		t.Errorf("access token without the author: %v", err)
	}
	if len(srv.Comments()) != 1 {
		t.Error("a comment was written though drift could not tell its own")
	}
}

// TestDataCenterSelfFromItsAnswers: Data Center names the user in X-AUSERNAME on
// every answer, else /plugins/servlet/applinks/whoami does; with neither, the error
// says to set DRIFT_BITBUCKET_AUTHOR.
func TestDataCenterSelfFromItsAnswers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name            string
		noHeader, noWho bool
		want, wantErr   string
	}{
		{"header", false, false, bitbuckettest.RepositoryBot.Name, ""},
		{"whoami", true, false, bitbuckettest.RepositoryBot.Name, ""},
		{"neither", true, true, "", AuthorVariable},
	} {
		srv := bitbuckettest.New(bitbuckettest.DataCenter, token)
		srv.NoUsernameHeader, srv.NoWhoami = c.noHeader, c.noWho
		self, err := site(t, ciOf(srv)).Self(context.Background())
		srv.Close()
		if self != c.want || (c.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: %q %v", c.name, self, err)
		}
	}
}

// TestDataCenterEditsAtTheCurrentVersion: someone edits drift's comment between the
// listing and the update (the version moves on); Data Center refuses the stale
// version (409), drift reads the current one and updates once more. A conflict that
// persists is an error after that one retry.
func TestDataCenterEditsAtTheCurrentVersion(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.DataCenter, token)
	defer srv.Close()
	marker := forge.Marker(nil)
	id := srv.AddComment(bitbuckettest.RepositoryBot, hide(marker+"\nfirst"))
	s := site(t, ciOf(srv))
	if err := s.Notes(context.Background(), func(forge.Note) bool { return true }); err != nil {
		t.Fatal(err)
	}
	srv.EditComment(id, hide(marker+"\nedited by hand"))
	if err := s.UpdateNote(context.Background(), id, marker+"\nsecond"); err != nil {
		t.Fatal(err)
	}
	if c := srv.Comments(); len(c) != 1 || show(c[0].Text) != marker+"\nsecond" || c[0].Version != 2 {
		t.Fatalf("comments = %+v", c)
	}
	var puts []string
	for _, r := range srv.Requests() {
		if !strings.HasPrefix(r, "GET ") || strings.HasSuffix(r, "/comments/101") {
			puts = append(puts, r)
		}
	}
	if len(puts) != 3 || !strings.HasPrefix(puts[0], "PUT ") || !strings.HasPrefix(puts[1], "GET ") || !strings.HasPrefix(puts[2], "PUT ") {
		t.Errorf("requests after the listing = %q, want a PUT, the GET of the version, a PUT", puts)
	}
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.Method != http.MethodPut {
			return false
		}
		w.WriteHeader(http.StatusConflict)
		return true
	}
	before := len(srv.Received)
	if err := s.UpdateNote(context.Background(), id, marker+"\nthird"); StatusCode(err) != http.StatusConflict || len(srv.Received)-before != 3 {
		t.Errorf("a lasting conflict: %v after %d requests", err, len(srv.Received)-before)
	}
}

// TestACommentOverDataCentersLimitIsTooLong: Data Center refuses a comment of 32,768
// UTF-16 units (400), which reads as too long, so publish falls back to the summary;
// a body of MaxNoteBytes, marker included, fits whatever it holds.
func TestACommentOverDataCentersLimitIsTooLong(t *testing.T) {
	t.Parallel()
	srv := bitbuckettest.New(bitbuckettest.DataCenter, token)
	defer srv.Close()
	s := site(t, ciOf(srv))
	_, err := s.CreateNote(context.Background(), strings.Repeat("x", 32768))
	if !TooLong(err) || StatusCode(err) != http.StatusBadRequest {
		t.Errorf("over the limit: %v is not too long", err)
	}
	marker := forge.Marker(nil)
	fp := forge.FingerprintLine(strings.Repeat("f", 64))
	for _, fill := range []string{"x", "é", "😀"} {
		head := marker + "\n" + fp + "\n"
		body := head + strings.Repeat(fill, (MaxNoteBytes-len(head))/len(fill))
		if len(body) > MaxNoteBytes {
			t.Fatalf("%d bytes", len(body))
		}
		if _, err := s.CreateNote(context.Background(), body); err != nil {
			t.Errorf("a body of %d bytes of %q: %v", len(body), fill, err)
		}
	}
	if TooLong(&Error{Code: http.StatusBadRequest, msg: "title: This field is required."}) || !TooLong(&Error{Code: http.StatusRequestEntityTooLarge}) {
		t.Error("another 400, or a 413, misread")
	}
}
