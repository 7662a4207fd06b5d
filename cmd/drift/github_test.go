package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/github/githubtest"
)

const ghToken = "ghs_drift-test-token"

// actionsEnv sets what GitHub Actions gives a pull_request job, pointing at srv.
func actionsEnv(t *testing.T, srv *githubtest.Server, pr int) (summary string) {
	t.Helper()
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	if err := os.WriteFile(event, []byte(fmt.Sprintf(`{"number": %d, "pull_request": {"number": %d, "head": {"sha": "abcdef0123456789abcdef0123456789abcdef01"}}}`, pr, pr)), 0o644); err != nil {
		t.Fatal(err)
	}
	summary = filepath.Join(dir, "summary.md")
	for k, v := range map[string]string{
		"GITHUB_TOKEN": ghToken, "GITHUB_REPOSITORY": "acme/gitops", "GITHUB_API_URL": srv.URL,
		"GITHUB_EVENT_PATH": event, "GITHUB_STEP_SUMMARY": summary, "GITHUB_SHA": "0000000000000000000000000000000000000000",
	} {
		t.Setenv(k, v)
	}
	return summary
}

func TestGitHubCommentCheckAndSummary(t *testing.T) {
	srv := githubtest.New(ghToken)
	defer srv.Close()
	summary := actionsEnv(t, srv, 12)
	ns := namespace(t)
	cm := func(name, value string) string {
		return sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: NS}\ndata: {v: "+value+"}\n", ns)
	}
	apply(t, "kubectl", cm("settings", "old"))
	r := repo(t, map[string]string{"settings.yaml": cm("settings", "new"), "tricky.yaml": cm("tricky", "\"```\\n@someone fixes #12\"")})
	jsonOut := filepath.Join(t.TempDir(), "out", "report.json")

	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-comment", "--json-report", jsonOut)
	if o.code != 1 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	comments := srv.Comments(12)
	if len(comments) != 1 || !strings.HasPrefix(comments[0].Body, "<!-- drift:report targets=") || !strings.Contains(comments[0].Body, "### drift: 1 to add, 1 to modify") {
		t.Fatalf("comments = %+v", comments)
	}
	// Text from manifests stays inside code: no mention, no issue link outside a fence.
	body := comments[0].Body
	if i := strings.Index(body, "@someone"); i < 0 || !strings.Contains(body[:i], "````") {
		t.Errorf("the tricky value is not fenced:\n%s", body)
	}
	if len(srv.CheckRuns) != 1 || srv.CheckRuns[0]["conclusion"] != "success" || srv.CheckRuns[0]["head_sha"] != "abcdef0123456789abcdef0123456789abcdef01" {
		t.Errorf("check runs = %+v", srv.CheckRuns)
	}
	if data, err := os.ReadFile(summary); err != nil || !strings.Contains(string(data), "### drift: 1 to add, 1 to modify") {
		t.Errorf("job summary: %v\n%s", err, data)
	}
	if data, err := os.ReadFile(jsonOut); err != nil || !strings.Contains(string(data), `"schemaVersion": "drift.report/v1"`) {
		t.Errorf("json report: %v", err)
	}
	if strings.Contains(o.stdout+o.stderr, ghToken) {
		t.Error("the token reached the output")
	}

	// Another push: the same comment is updated in place.
	if _, err := r.CommitFiles(map[string]string{"settings.yaml": cm("settings", "newer")}, "push"); err != nil {
		t.Fatal(err)
	}
	drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-comment")
	if comments := srv.Comments(12); len(comments) != 1 || !strings.Contains(comments[0].Body, "+  v: newer") {
		t.Fatalf("not updated in place: %d comments", len(comments))
	}

	// A fork's read-only token: the comment is refused, the summary is still written,
	// and the exit code is the diff's.
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"Resource not accessible by integration"}`)
		return true
	}
	_ = os.Remove(summary)
	o = drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-comment")
	if o.code != 1 || !strings.Contains(o.stderr, "a pull request from a fork gets a read-only token") {
		t.Errorf("fork: exit %d\n%s", o.code, o.stderr)
	}
	if _, err := os.Stat(summary); err != nil {
		t.Errorf("fork: no job summary: %v", err)
	}
}

func TestGitHubCommentStaysUnderTheLimit(t *testing.T) {
	srv := githubtest.New(ghToken)
	defer srv.Close()
	summary := actionsEnv(t, srv, 13)
	ns := namespace(t)
	files := map[string]string{}
	big := strings.Repeat("x", 600)
	for i := 0; i < 200; i++ {
		files[fmt.Sprintf("cm-%03d.yaml", i)] = sub(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: NS}\ndata: {blob: %s%03d}\n", i, big, i), ns)
	}
	r := repo(t, files)
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-comment", "--github-check=false")
	if o.code != 1 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	c := srv.Comments(13)
	if len(c) != 1 {
		t.Fatalf("%d comments", len(c))
	}
	body := c[0].Body
	if n := len([]rune(body)); n > 65536 || !strings.Contains(body, "diffs did not fit in this comment") || !strings.Contains(body, "`v1 ConfigMap "+ns+"/cm-199` from `cm-199.yaml`: diff left out") {
		t.Errorf("comment of %d characters:\n%s", len([]rune(body)), body[len(body)-600:])
	}
	if strings.Count(body, "```diff") == 0 {
		t.Errorf("no diffs at all")
	}
	if strings.Count(body, "```")%2 != 0 {
		t.Errorf("a code block is cut")
	}
	data, _ := os.ReadFile(summary)
	if strings.Count(string(data), "```diff") != 200 {
		t.Errorf("the job summary lacks diffs: %d", strings.Count(string(data), "```diff"))
	}
	if len(srv.CheckRuns) != 0 {
		t.Errorf("--github-check=false still reported a check")
	}
}

// TestGitHubRefusesTheBodyThenTheSummaryIsPosted: GitHub's 422 for a body it finds too
// long (its count can differ from ours) falls back to the summary alone.
func TestGitHubRefusesTheBodyThenTheSummaryIsPosted(t *testing.T) {
	srv := githubtest.New(ghToken)
	defer srv.Close()
	srv.MaxBody = 1500
	actionsEnv(t, srv, 14)
	ns := namespace(t)
	r := repo(t, map[string]string{"cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: NS}\ndata: {blob: "+strings.Repeat("y", 3000)+"}\n", ns)})
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-comment")
	c := srv.Comments(14)
	if o.code != 1 || len(c) != 1 || !strings.Contains(c[0].Body, "The report is too long for a comment") || strings.Contains(c[0].Body, "```diff") {
		t.Fatalf("exit %d, comments %+v\n%s", o.code, c, o.stderr)
	}
}
