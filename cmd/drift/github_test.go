package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/github/githubtest"
	"github.com/drift-gitops/drift/internal/publish"
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

// TestGitHubCommentCheckAndSummary runs drift diff in a pull request's job: the flags
// and the Actions environment reach publishing (internal/publish tests the rest), and a
// fork's read-only token leaves the exit code the diff's.
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

// TestEveryGitHubFlagReachesPublish: each flag of the GitHub side, set on the command
// line, is in what publish is asked to do.
func TestEveryGitHubFlagReachesPublish(t *testing.T) {
	t.Parallel()
	var o app.Run
	g := &o.GitHub
	f := pflag.NewFlagSet("diff", pflag.ContinueOnError)
	bindGitHub(f, g)
	args := []string{"--github-comment", "--github-check=false", "--fail-on-deletes", "--github-token=tok", "--github-repository=acme/gitops",
		"--github-pr=7", "--github-api-url=https://ghe.example/api/v3", "--github-author=deploy-app[bot]", "--github-sha=abc",
		"--step-summary=s.md", "--json-report=r.json", "--comment-file=c.md", "--github-output", "--github-issue"}
	f.BoolVar(&g.Issue, "github-issue", false, "") // drift detect's flag, bound by bindIssues
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	n := 0
	f.VisitAll(func(*pflag.Flag) { n++ })
	if n != len(args) {
		t.Fatalf("%d flags, the test sets %d: set the new one", n, len(args))
	}
	want := publish.Options{JSONReport: "r.json", Outputs: true, Comment: true, Check: false, Issue: true, CommentFile: "c.md",
		GitHub: github.Context{Token: "tok", Repository: "acme/gitops", APIURL: "https://ghe.example/api/v3", PR: 7, HeadSHA: "abc", Author: "deploy-app[bot]", StepSummary: "s.md"}}
	if got := g.Options(); !reflect.DeepEqual(got, want) || !g.FailOnDeletes {
		t.Errorf("options = %+v\nwant      %+v", got, want)
	}
}

// TestErrorsAnnotatedOnTheirManifestLine: in an Actions step, an object the server
// refuses is annotated on its file and the line its YAML document starts on, which
// GitHub shows in the pull request's files.
func TestErrorsAnnotatedOnTheirManifestLine(t *testing.T) {
	srv := githubtest.New(ghToken)
	defer srv.Close()
	actionsEnv(t, srv, 14)
	t.Setenv("GITHUB_ACTIONS", "true")
	ns := namespace(t)
	manifest := cm(ns, "good", "blue") + "---\n# the port is out of range\n" + svc(ns, "99999")
	r := repo(t, map[string]string{"apps/web.yaml": manifest})
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-comment")
	line := strings.Count(cm(ns, "good", "blue"), "\n") + 2
	want := fmt.Sprintf("::error file=apps/web.yaml,line=%d,title=drift%%3A invalid v1 Service %s/web::", line, ns)
	if o.code != 2 || !strings.Contains(o.stderr, want) {
		t.Fatalf("exit %d, want an annotation %q in\n%s", o.code, want, o.stderr)
	}
	if strings.Count(o.stderr, "::error file=") != 1 {
		t.Errorf("one error, several annotations:\n%s", o.stderr)
	}
}
