package publish

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/github/githubtest"
	"github.com/drift-gitops/drift/internal/policy"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report"
)

// TestCommentIsPostedThenUpdatedWithTheCheckAndTheSummary: the first run creates the
// comment, reports the check on the event's head commit and appends the job summary;
// the next push updates the same comment in place.
func TestCommentIsPostedThenUpdatedWithTheCheckAndTheSummary(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 12)
	opts := Options{Comment: true, Check: true}
	tricky := map[string]string{"v": "```\n@someone fixes #12"}
	rep := preview(t, modified("settings", map[string]string{"v": "old"}, map[string]string{"v": "new"}), added("tricky", tricky))
	said, err := h.publish(t, rep, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := "drift: created the pull request comment\ndrift: reported a check run on " + headSHA + "\n"; said != want {
		t.Errorf("stderr = %q, want %q", said, want)
	}
	comments := h.srv.Comments(12)
	marker := forge.Marker([]string{"web"})
	if len(comments) != 1 || !strings.HasPrefix(comments[0].Body, marker+"\n### drift: 1 to add, 1 to modify") {
		t.Fatalf("comments = %+v", comments)
	}
	// Text from manifests stays inside code: no mention, no issue link outside a fence.
	body := comments[0].Body
	if i := strings.Index(body, "@someone"); i < 0 || !strings.Contains(body[:i], "````") {
		t.Errorf("the tricky value is not fenced:\n%s", body)
	}
	runs := h.srv.CheckRuns
	if len(runs) != 1 || runs[0]["conclusion"] != "success" || runs[0]["head_sha"] != headSHA || runs[0]["name"] != "drift" {
		t.Fatalf("check runs = %+v", runs)
	}
	output, _ := runs[0]["output"].(map[string]any)
	if output["title"] != rep.Summary.Headline() || !strings.Contains(fmt.Sprint(output["summary"]), "| `web` | 1 | 1 | 0 | 0 | 0 |") {
		t.Errorf("check output = %+v", output)
	}
	if s := read(t, h.summary); !strings.HasPrefix(s, "### drift: 1 to add, 1 to modify") || !strings.Contains(s, "+  v: new") {
		t.Errorf("job summary:\n%s", s)
	}

	rep = preview(t, modified("settings", map[string]string{"v": "old"}, map[string]string{"v": "newer"}))
	if said, err := h.publish(t, rep, opts); err != nil || !strings.HasPrefix(said, "drift: updated the pull request comment\n") {
		t.Fatalf("second push: %q %v", said, err)
	}
	if c := h.srv.Comments(12); len(c) != 1 || !strings.Contains(c[0].Body, "+  v: newer") || strings.Contains(c[0].Body, "tricky") {
		t.Fatalf("not updated in place: %+v", c)
	}
	if n := strings.Count(read(t, h.summary), "### drift:"); n != 2 {
		t.Errorf("the job summary holds %d reports, want both runs' (it is appended to)", n)
	}
}

// TestCheckConclusion: the check fails when the report is incomplete, and when the
// report fails its policy (deletes only when the policy says so); changes alone never
// fail it.
func TestCheckConclusion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		failOnDeletes bool
		rep           func(t *testing.T) *report.Report
		want          string
	}{
		{"changes", false, func(t *testing.T) *report.Report { return preview(t, added("a", nil)) }, "success"},
		{"incomplete", false, func(t *testing.T) *report.Report { return preview(t, added("a", nil), failed("b", "denied")) }, "failure"},
		{"deletes", false, func(t *testing.T) *report.Report { return preview(t, deleted("a")) }, "success"},
		{"deletes, failing on deletes", true, func(t *testing.T) *report.Report { return preview(t, deleted("a")) }, "failure"},
		{"no deletes, failing on deletes", true, func(t *testing.T) *report.Report { return preview(t, added("a", nil)) }, "success"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 3)
			rep := c.rep(t)
			if c.failOnDeletes {
				if err := policy.Apply(rep, []string{"delete"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.publish(t, rep, Options{Comment: true, Check: true}); err != nil {
				t.Fatal(err)
			}
			if runs := h.srv.CheckRuns; len(runs) != 1 || runs[0]["conclusion"] != c.want {
				t.Errorf("check runs = %+v, want conclusion %s", runs, c.want)
			}
		})
	}
}

// TestCommentTooLongForGitHubFallsBackToTheSummary: GitHub's 422 for a body it finds
// too long (its count can differ from ours) gets the summary alone, and the check
// still follows.
func TestCommentTooLongForGitHubFallsBackToTheSummary(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 14)
	h.srv.MaxBody = 1500
	rep := preview(t, added("big", map[string]string{"blob": strings.Repeat("y", 3000)}))
	said, err := h.publish(t, rep, Options{Comment: true, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	c := h.srv.Comments(14)
	if len(c) != 1 || !strings.Contains(c[0].Body, "The diffs are in the job summary") || strings.Contains(c[0].Body, "```diff") {
		t.Fatalf("comments = %+v", c)
	}
	if len(h.srv.CheckRuns) != 1 || !strings.Contains(said, "drift: created the pull request comment") {
		t.Errorf("no check after the fallback: %+v\n%s", h.srv.CheckRuns, said)
	}
	if s := read(t, h.summary); !strings.Contains(s, strings.Repeat("y", 3000)) {
		t.Error("the job summary lost the diff")
	}
}

// TestCommentStaysUnderTheLimit: 200 objects with large diffs: the comment keeps under
// GitHub's limit with whole diffs only and names what it left out, pointing to the
// run's job summary; the check run's text holds diffs the comment has not, within its
// own limit; the job summary has every diff.
func TestCommentStaysUnderTheLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 13)
	var results []dryrun.Result
	big := strings.Repeat("x", 600)
	for i := 0; i < 200; i++ {
		results = append(results, added(fmt.Sprintf("cm-%03d", i), map[string]string{"blob": fmt.Sprintf("%s%03d", big, i)}))
	}
	h.env["GITHUB_SERVER_URL"], h.env["GITHUB_RUN_ID"] = "https://github.com", "99"
	if _, err := h.publish(t, preview(t, results...), Options{Comment: true, Check: true}); err != nil {
		t.Fatal(err)
	}
	c := h.srv.Comments(13)
	if len(c) != 1 {
		t.Fatalf("%d comments", len(c))
	}
	body := c[0].Body
	if n := len([]rune(body)); n > 65536 || !strings.Contains(body, "diffs did not fit in this comment") || !strings.Contains(body, "- ➕ `v1 ConfigMap shop/cm-199` · details in [the job summary](https://github.com/acme/gitops/actions/runs/99)") {
		t.Errorf("comment of %d characters:\n%s", n, body[max(len(body)-600, 0):])
	}
	if strings.Count(body, "```diff") == 0 {
		t.Error("no diffs at all")
	}
	if strings.Count(body, "```")%2 != 0 {
		t.Error("a code block is cut")
	}
	if n := strings.Count(read(t, h.summary), "```diff"); n != 200 {
		t.Errorf("the job summary has %d diffs, want 200", n)
	}
	if len(h.srv.CheckRuns) != 1 {
		t.Fatalf("%d check runs", len(h.srv.CheckRuns))
	}
	text, _ := h.srv.CheckRuns[0]["output"].(map[string]any)["text"].(string)
	if n := strings.Count(text, "```diff"); n == 0 || len([]rune(text)) > 65535 {
		t.Errorf("check text of %d characters with %d diffs", len([]rune(text)), n)
	}
	for i := 0; i < 200; i++ {
		name := fmt.Sprintf("name: cm-%03d\n", i)
		if strings.Contains(text, name) && strings.Contains(body, name) {
			t.Errorf("cm-%03d is in both the comment and the check's text", i)
		}
	}
}

// TestRefusalsAreReturnedAfterTheFilesAreWritten: a fork's read-only token (403) and
// an unreachable GitHub both come back as errors, the 403 with its status so the
// caller can keep the diff's exit code; the job summary, the JSON copy and the comment
// file are written first either way, and the token is in no message.
func TestRefusalsAreReturnedAfterTheFilesAreWritten(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		refuse    bool
		transport http.RoundTripper
		code      int
		want      string
	}{
		{"read-only token", true, nil, http.StatusForbidden, "a pull request from a fork gets a read-only token"},
		{"unreachable", false, unreachable{}, 0, "connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 15)
			if c.refuse {
				h.srv.Fault = refuseAll
			}
			deps := h.deps()
			if c.transport != nil {
				deps.Transport = c.transport
			}
			opts := Options{Comment: true, Check: true, JSONReport: h.path("out/report.json"), CommentFile: h.path("out/comment.md")}
			err := Run(t.Context(), preview(t, added("a", nil)), opts, deps)
			if err == nil || github.StatusCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (status %d), want status %d and %q", err, github.StatusCode(err), c.code, c.want)
			}
			if strings.Contains(err.Error(), token) {
				t.Error("the token is in the error")
			}
			for _, f := range []string{h.summary, opts.JSONReport, opts.CommentFile} {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("not written before posting: %v", err)
				}
			}
			if len(h.srv.Comments(15)) != 0 || len(h.srv.CheckRuns) != 0 {
				t.Error("something was posted")
			}
		})
	}
}

// TestMarkedCommentsOfOthersAreLeftAlone: someone learns drift's marker (it is in
// every comment, and in the comment file) and posts a comment with it saying there are
// no changes. drift leaves it as it is, warns, posts its own report, and the next push
// updates drift's own comment, not the fake.
func TestMarkedCommentsOfOthersAreLeftAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 31)
	file := h.path("comment.md")
	rep := preview(t, modified("settings", map[string]string{"v": "old"}, map[string]string{"v": "new"}))
	if _, err := h.publish(t, rep, Options{CommentFile: file}); err != nil {
		t.Fatal(err)
	}
	if h.srv.Writes+len(h.srv.Requests) != 0 {
		t.Fatal("the comment file alone asked GitHub")
	}
	marker, _, _ := strings.Cut(read(t, file), "\n")
	fake := marker + "\n### drift: no changes\n\nNothing to apply."
	mallory := githubtest.User{Login: "mallory", Type: "User"}
	h.srv.AddCommentBy(31, mallory, fake)

	for _, v := range []string{"new", "newer"} {
		rep := preview(t, modified("settings", map[string]string{"v": "old"}, map[string]string{"v": v}))
		if _, err := h.publish(t, rep, Options{Comment: true}); err != nil {
			t.Fatal(err)
		}
		c := h.srv.Comments(31)
		if len(c) != 2 || c[0].Body != fake || c[0].User != mallory {
			t.Fatalf("the fake comment was taken over: %+v", c)
		}
		if c[1].User != githubtest.ActionsBot || !strings.HasPrefix(c[1].Body, marker+"\n### drift: 1 to modify") || !strings.Contains(c[1].Body, "+  v: "+v) {
			t.Fatalf("drift's own comment after %q:\n%+v", v, c[1])
		}
	}
	if len(h.warned) != 1 || !strings.Contains(h.warned[0], "left alone 1 comment(s) that carry drift's marker but were written by mallory") {
		t.Errorf("warnings = %q", h.warned)
	}
}

// TestTheJSONCopyIsTheJSONReport: the copy is byte for byte what -o json writes.
func TestTheJSONCopyIsTheJSONReport(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	rep := preview(t, added("a", nil), failed("b", "denied"))
	path := h.path("deep/er/report.json")
	if _, err := h.publish(t, rep, Options{JSONReport: path}); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	if err := report.WriteJSON(&want, rep); err != nil {
		t.Fatal(err)
	}
	got := read(t, path)
	if got != want.String() {
		t.Errorf("the copy differs from the report:\n%s", got)
	}
	var back report.Report
	if err := json.Unmarshal([]byte(got), &back); err != nil || back.SchemaVersion != report.SchemaVersion || back.Complete {
		t.Errorf("copy: %v %+v", err, back)
	}
}
