package publish

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write/trusttest"
)

// hostileAndLarge is trusttest.Report with, in its first target, four more
// modifications whose hostile diffs are too large for one comment: the comment holds
// some, the check run's text others, the job summary all.
func hostileAndLarge() *report.Report {
	rep := trusttest.Report()
	t := &rep.Targets[0]
	for i := 0; i < 4; i++ {
		o := t.Objects[1]
		o.Name = fmt.Sprintf("large-%d %s", i, trusttest.Strings[i])
		var diff strings.Builder
		diff.WriteString("--- live\n+++ merged\n@@ -1,300 +1,300 @@\n")
		for j := 0; diff.Len() < 25000; j++ {
			fmt.Fprintf(&diff, "+  v%d: %s\n", j, trusttest.Strings[j%len(trusttest.Strings)])
		}
		o.Diff = diff.String()
		t.Objects = append(t.Objects, o)
	}
	rep.Summary.Modify += 4
	rep.Summary.Risky += 4
	return rep
}

// TestTrustEveryPublishedBodyRenderedByGitHubHoldsNoInjection publishes a report
// whose every string from a repository or a cluster is hostile, and renders every
// markdown body drift writes with cmark-gfm and GitHub's extensions: on GitHub the job
// summary, the comment file, the pull request comment, the summary alone that a
// refusal for size falls back to, the check run's summary and text and the drift
// issue's body; on GitLab the note file, the merge request note, its summary-only
// fallback and the drift issue's description. None holds an image, a link but drift's
// own (its anchors, the run, the job's artifacts), a heading or a </details> drift
// did not write, or a hostile string, mention, issue reference or URL outside <code>
// and <pre>; the titles and descriptions, plain text, hold no hostile string.
func TestTrustEveryPublishedBodyRenderedByGitHubHoldsNoInjection(t *testing.T) {
	t.Parallel()
	bin := trusttest.GFM(t)
	rep := hostileAndLarge()
	bodies, plain := map[string]string{}, map[string]string{}

	// GitHub: a pull request's comment and check, the job summary, the comment file.
	gh := newHarness(t, 7)
	gh.env["GITHUB_SERVER_URL"], gh.env["GITHUB_RUN_ID"] = "https://github.com", "99"
	opts := Options{Comment: true, Check: true, CommentFile: gh.path("comment.md"), HTMLReport: "drift/report.html", HTMLArtifact: "drift-report"}
	if _, err := gh.publish(t, rep, opts); err != nil {
		t.Fatal(err)
	}
	bodies["job summary"], bodies["comment file"] = read(t, gh.summary), read(t, gh.path("comment.md"))
	if c := gh.srv.Comments(7); len(c) == 1 {
		bodies["comment"] = c[0].Body
	}
	if len(gh.srv.CheckRuns) == 1 {
		out, _ := gh.srv.CheckRuns[0]["output"].(map[string]any)
		bodies["check summary"], _ = out["summary"].(string)
		bodies["check text"], _ = out["text"].(string)
		plain["check title"], _ = out["title"].(string)
	}
	// GitHub refusing the comment for its size: the summary alone.
	tooLong := newHarness(t, 7)
	tooLong.srv.MaxBody = 30000
	if _, err := tooLong.publish(t, rep, Options{Comment: true}); err != nil {
		t.Fatal(err)
	}
	if c := tooLong.srv.Comments(7); len(c) == 1 {
		bodies["comment, too long"] = c[0].Body
	}
	// A scheduled drift check's issue.
	issue := newHarness(t, 0)
	if _, err := issue.publish(t, rep, Options{Issue: true}); err != nil {
		t.Fatal(err)
	}
	for _, is := range issue.srv.Issues {
		bodies["issue"], plain["issue title"] = is.Body, is.Title
	}

	// GitLab: the merge request's note and status, the note file, the fallback, the issue.
	gl := newGitLabHarness(t)
	if _, err := gl.publish(t, rep, Options{Comment: true, Check: true, CommentFile: gl.dir + "/note.md", HTMLReport: "drift/report.html"}); err != nil {
		t.Fatal(err)
	}
	bodies["gitlab note file"] = read(t, gl.dir+"/note.md")
	if n := gl.srv.Notes(7); len(n) == 1 {
		bodies["gitlab note"] = n[0].Body
	}
	if len(gl.srv.Statuses) == 1 {
		plain["gitlab status"], _ = gl.srv.Statuses[0]["description"].(string)
	}
	glTooLong := newGitLabHarness(t)
	glTooLong.srv.MaxNote = 30000
	if _, err := glTooLong.publish(t, rep, Options{Comment: true}); err != nil {
		t.Fatal(err)
	}
	if n := glTooLong.srv.Notes(7); len(n) == 1 {
		bodies["gitlab note, too long"] = n[0].Body
	}
	glIssue := newGitLabHarness(t)
	delete(glIssue.env, "CI_MERGE_REQUEST_IID")
	if _, err := glIssue.publish(t, rep, Options{Issue: true}); err != nil {
		t.Fatal(err)
	}
	for _, is := range glIssue.srv.Issues {
		bodies["gitlab issue"], plain["gitlab issue title"] = is.Description, is.Title
	}

	page := trusttest.Page{MaxH4: trusttest.Diffed(rep), Links: []string{
		"https://github.com/acme/gitops/actions/runs/99",
		"https://gitlab.example/acme/gitops/-/jobs/5/artifacts/browse",
		"https://gitlab.example/acme/gitops/-/jobs/5/artifacts/file/drift/report.html",
	}}
	for _, name := range []string{"job summary", "comment file", "comment", "check summary", "check text", "comment, too long", "issue",
		"gitlab note file", "gitlab note", "gitlab note, too long", "gitlab issue"} {
		md := bodies[name]
		if !strings.Contains(md, trusttest.Mark) {
			t.Errorf("%s: missing or shows no hostile string:\n%s", name, md)
			continue
		}
		rendered := trusttest.Render(t, bin, md)
		before := t.Failed()
		trusttest.Check(t, name, rendered, page)
		if !before && t.Failed() {
			t.Logf("%s markdown:\n%s\nrendered:\n%s", name, md, rendered)
		}
	}
	if !strings.Contains(bodies["check text"], "```diff") || !strings.Contains(bodies["comment, too long"], "The diffs are in") {
		t.Errorf("the check text holds no diff, or the comment GitHub refused was not followed by the summary alone")
	}
	for name, s := range plain {
		if s == "" || strings.Contains(s, trusttest.Mark) {
			t.Errorf("%s: %q is empty or holds a hostile string", name, s)
		}
	}
}
