package publish

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/gitlab"
	"github.com/drift-gitops/drift/internal/gitlab/gitlabtest"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/scrub"
)

const glToken = "glpat-publish-test-token"

// glHarness is a GitLab CI merge request job's environment against a GitLab stand-in.
type glHarness struct {
	srv    *gitlabtest.Server
	env    map[string]string
	dir    string
	stderr bytes.Buffer
	warned []string
}

func newGitLabHarness(t *testing.T) *glHarness {
	t.Helper()
	srv := gitlabtest.New(glToken)
	t.Cleanup(srv.Close)
	srv.AddPipeline(900, headSHA, "refs/merge-requests/7/head", "drift-diff")
	return &glHarness{srv: srv, dir: t.TempDir(), env: map[string]string{
		"GITLAB_CI": "true", "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7", "CI_API_V4_URL": srv.URL + "/api/v4",
		"CI_COMMIT_SHA": headSHA, "CI_PIPELINE_ID": "900", "CI_JOB_URL": "https://gitlab.example/acme/gitops/-/jobs/5",
		"CI_JOB_TOKEN": "job-token-value", "DRIFT_GITLAB_TOKEN": glToken,
	}}
}

func (h *glHarness) publish(t *testing.T, rep *report.Report, opts Options) (string, error) {
	t.Helper()
	h.stderr.Reset()
	opts.Forge = GitLab
	err := Run(t.Context(), rep, opts, Deps{Getenv: func(k string) string { return h.env[k] }, Stderr: &h.stderr,
		Warn: func(m string) { h.warned = append(h.warned, m) }})
	return h.stderr.String(), err
}

// TestGitLabNoteThenStatusThenUpdatedInPlace: the first run writes the merge
// request's note and sets the commit status on the head, in the pipeline, linking the
// HTML report among the job's artifacts; the next push updates the same note; the
// outputs go to a dotenv report.
func TestGitLabNoteThenStatusThenUpdatedInPlace(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	dotenv := filepath.Join(h.dir, "drift.env")
	opts := Options{Comment: true, Check: true, CheckName: "drift (web)", HTMLReport: "drift/report.html", JSONReport: filepath.Join(h.dir, "report.json"), Dotenv: dotenv}
	rep := preview(t, modified("settings", map[string]string{"v": "old"}, map[string]string{"v": "new"}), failed("broken", "denied"))
	said, err := h.publish(t, rep, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := "drift: created the merge request note\ndrift: set the commit status on " + headSHA + "\n"; said != want {
		t.Errorf("stderr = %q, want %q", said, want)
	}
	notes := h.srv.Notes(7)
	marker := forge.Marker([]string{"web"})
	if len(notes) != 1 || !strings.HasPrefix(notes[0].Body, marker+"\n### drift: 1 to modify") || !strings.Contains(notes[0].Body, "+  v: new") ||
		!strings.Contains(notes[0].Body, "[the job's artifact](https://gitlab.example/acme/gitops/-/jobs/5/artifacts/file/drift/report.html)") {
		t.Fatalf("notes = %+v", notes)
	}
	st := h.srv.Statuses
	if len(st) != 1 || st[0]["sha"] != headSHA || st[0]["state"] != "failed" || st[0]["name"] != "drift (web)" || st[0]["description"] != rep.Summary.Headline() ||
		st[0]["target_url"] != "https://gitlab.example/acme/gitops/-/jobs/5/artifacts/file/drift/report.html" || st[0]["pipeline_id"] != float64(900) {
		t.Fatalf("statuses = %+v", st)
	}
	if env := read(t, dotenv); !strings.Contains(env, "DRIFT_HAS_CHANGES=true\n") || !strings.Contains(env, "DRIFT_REPORT_JSON="+opts.JSONReport+"\n") ||
		!strings.Contains(env, "DRIFT_REPORT_HTML=drift/report.html\n") || !strings.Contains(env, "DRIFT_COMPLETE=false\n") {
		t.Errorf("dotenv:\n%s", env)
	}

	rep = preview(t, modified("settings", map[string]string{"v": "old"}, map[string]string{"v": "newer"}))
	if said, err := h.publish(t, rep, opts); err != nil || !strings.HasPrefix(said, "drift: updated the merge request note\n") {
		t.Fatalf("second push: %q %v", said, err)
	}
	if n := h.srv.Notes(7); len(n) != 1 || n[0].ID != notes[0].ID || !strings.Contains(n[0].Body, "+  v: newer") {
		t.Fatalf("not updated in place: %+v", n)
	}
	if st := h.srv.Statuses; len(st) != 2 || st[1]["state"] != "success" {
		t.Errorf("second status = %+v", st)
	}
}

// TestGitLabNoteStaysUnderGitLabsLimit: 1,800 objects with large diffs, more than
// GitLab keeps in a note: the note holds whole diffs only, up to nearly GitLab's
// 1,000,000 characters (far past GitHub's 65,536), and names what it left out,
// pointing to the job's artifacts and naming GitLab's limit.
func TestGitLabNoteStaysUnderGitLabsLimit(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	var results []dryrun.Result
	big := strings.Repeat("x", 600)
	for i := 0; i < 1800; i++ {
		results = append(results, added(fmt.Sprintf("cm-%04d", i), map[string]string{"blob": fmt.Sprintf("%s%04d", big, i)}))
	}
	if _, err := h.publish(t, preview(t, results...), Options{Comment: true}); err != nil {
		t.Fatal(err)
	}
	n := h.srv.Notes(7)
	if len(n) != 1 {
		t.Fatalf("%d notes", len(n))
	}
	body := n[0].Body
	chars := len([]rune(body))
	if chars > 1000000 || chars < 900000 {
		t.Errorf("note of %d characters, want close to GitLab's 1,000,000 and not over", chars)
	}
	if !strings.Contains(body, "did not fit in this note (GitLab's size limit): they are in [the job's artifacts](https://gitlab.example/acme/gitops/-/jobs/5/artifacts/browse)") ||
		strings.Contains(body, "GitHub") {
		t.Errorf("the note does not say what it left out, and where it is:\n%s", body[max(len(body)-600, 0):])
	}
	if strings.Count(body, "```")%2 != 0 {
		t.Error("a code block is cut")
	}
}

// TestGitLabRefusingTheNoteForItsSizeGetsTheSummary: GitLab's 400 for a note over
// its limit (its count can differ from drift's) gets the summary alone, then the
// status as usual.
func TestGitLabRefusingTheNoteForItsSizeGetsTheSummary(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	h.srv.MaxNote = 1500
	rep := preview(t, added("big", map[string]string{"blob": strings.Repeat("y", 3000)}))
	if _, err := h.publish(t, rep, Options{Comment: true, Check: true}); err != nil {
		t.Fatal(err)
	}
	n := h.srv.Notes(7)
	if len(n) != 1 || !strings.Contains(n[0].Body, "The diffs are in [the job's artifacts]") || strings.Contains(n[0].Body, "```diff") {
		t.Fatalf("notes = %+v", n)
	}
	if len(h.srv.Statuses) != 1 {
		t.Errorf("no status after the fallback")
	}
}

// TestGitLabDriftIssueFollowsTheDrift: drift detect --gitlab-issue keeps one issue:
// opened with the label (created), left alone while the drift is the same, updated,
// closed with a note, reopened.
func TestGitLabDriftIssueFollowsTheDrift(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	delete(h.env, "CI_MERGE_REQUEST_IID") // a scheduled pipeline
	kv := map[string]string{"k": "v"}
	calm := modified("calm", kv, kv)
	red, blue := map[string]string{"color": "red"}, map[string]string{"color": "blue"}
	for _, s := range []struct {
		rep  *report.Report
		said string
	}{
		{driftCheck(t, calm), "drift: nothing to do (no drift, no open issue)\n"},
		{driftCheck(t, calm, modified("settings", red, blue)), "drift: opened issue #1\n"},
		{driftCheck(t, calm, modified("settings", red, blue)), "drift: issue #1 is up to date (the drift did not change)\n"},
		{driftCheck(t, modified("calm", map[string]string{"k": "x"}, kv), modified("settings", red, blue)), "drift: updated issue #1\n"},
		{driftCheck(t, calm), "drift: closed issue #1\n"},
		{driftCheck(t, calm, modified("settings", blue, red)), "drift: reopened issue #1\n"},
	} {
		said, err := h.publish(t, s.rep, Options{Issue: true})
		if err != nil || said != s.said {
			t.Fatalf("%q %v, want %q", said, err, s.said)
		}
	}
	is := h.srv.Issues[1]
	if len(h.srv.Issues) != 1 || !h.srv.Labels["drift"] || is.State != "opened" || !strings.Contains(is.Description, "### drift: drift detected: ") {
		t.Errorf("issues = %+v, labels %v", h.srv.Issues, h.srv.Labels)
	}
	if len(h.srv.Notes(7))+len(h.srv.Statuses) != 0 {
		t.Error("the drift check wrote a note or a status")
	}
}

// TestGitLabPreflightRefusesTheJobTokenAlone: a job with only CI_JOB_TOKEN is told,
// before any work, that it cannot write notes and what to create; the issue needs no
// merge request.
func TestGitLabPreflightRefusesTheJobTokenAlone(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	delete(h.env, "DRIFT_GITLAB_TOKEN")
	getenv := func(k string) string { return h.env[k] }
	err := Options{Forge: GitLab, Comment: true}.Preflight(getenv)
	if err == nil || !strings.Contains(err.Error(), "only CI_JOB_TOKEN") || strings.Contains(err.Error(), "job-token-value") {
		t.Errorf("Preflight = %v", err)
	}
	if err := (Options{Forge: GitLab, Comment: true, GitLab: gitlab.Context{Token: "glpat-flag"}}).Preflight(getenv); err != nil {
		t.Errorf("with --gitlab-token: %v", err)
	}
	delete(h.env, "CI_MERGE_REQUEST_IID")
	h.env["DRIFT_GITLAB_TOKEN"] = glToken
	if err := (Options{Forge: GitLab, Issue: true}).Preflight(getenv); err != nil {
		t.Errorf("issue: %v", err)
	}
	if len(h.srv.Received) != 0 {
		t.Error("GitLab was asked")
	}
}

// TestNoSecretValueReachesGitLab: a Secret's values, and a credential the run knows,
// are scrubbed from the report publish is given; nothing drift sends GitLab (note,
// status, issue) holds them in any form.
func TestNoSecretValueReachesGitLab(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	const value = "hunter2-very-secret-password"
	secret := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "db", "namespace": "shop"}, "type": "Opaque",
			"data": map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(v))}}}
	}
	sc := scrub.New()
	sc.AddCredential(glToken)
	in := entry.Input{Ref: "refs/merge-requests/7/head", Commit: headSHA, Targets: []entry.TargetInput{{Name: "web", Results: []dryrun.Result{
		result(secret(value), secret("old-password-value"), secret(value)),
		failed("cm", "server said: password "+value+" rejected, token "+glToken),
	}}}}
	rep, err := entry.Build(in, entry.NewBuilder(entry.Options{}, sc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.publish(t, rep, Options{Comment: true, Check: true}); err != nil {
		t.Fatal(err)
	}
	delete(h.env, "CI_MERGE_REQUEST_IID")
	if _, err := h.publish(t, driftCheck(t, result(secret(value), secret("x-old-password"), secret(value))), Options{Issue: true}); err != nil {
		t.Fatal(err)
	}
	if len(h.srv.Notes(7)) != 1 || len(h.srv.Statuses) != 1 || len(h.srv.Issues) != 1 {
		t.Fatalf("not published: %d notes, %d statuses, %d issues", len(h.srv.Notes(7)), len(h.srv.Statuses), len(h.srv.Issues))
	}
	forms := []string{value, base64.StdEncoding.EncodeToString([]byte(value)), "old-password-value", glToken}
	for _, r := range h.srv.Received {
		for _, f := range forms {
			if strings.Contains(r.Body, f) || strings.Contains(r.Path, f) {
				t.Errorf("%s %s carries %q", r.Method, r.Path, f)
			}
		}
	}
	if !strings.Contains(h.srv.Notes(7)[0].Body, "Secret") {
		t.Error("the Secret is not in the note at all")
	}
}

// TestTheGitLabNoteFileIsTheNote: --comment-file on GitLab is the note in GitLab's
// flavour, with its marker, written without asking GitLab (nor needing a token).
func TestTheGitLabNoteFileIsTheNote(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	delete(h.env, "DRIFT_GITLAB_TOKEN")
	file := filepath.Join(h.dir, "note.md")
	rep := preview(t, added("a", map[string]string{"k": "v"}))
	if _, err := h.publish(t, rep, Options{CommentFile: file}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(data), forge.Marker([]string{"web"})+"\n### drift: 1 to add") {
		t.Fatalf("%v\n%s", err, data)
	}
	if len(h.srv.Received) != 0 {
		t.Error("GitLab was asked")
	}
}

// TestGitLabStatusOnAnotherCommitLeavesThePipelineOut: in a merged results pipeline
// the status goes on the merge commit the pipeline runs (CI_COMMIT_SHA), in that
// pipeline. --gitlab-sha naming another commit (the source branch's head) sends no
// pipeline_id, which GitLab would refuse with that commit (404), so GitLab puts it in
// that commit's own pipeline; --gitlab-sha naming CI_COMMIT_SHA keeps the pipeline.
func TestGitLabStatusOnAnotherCommitLeavesThePipelineOut(t *testing.T) {
	t.Parallel()
	h := newGitLabHarness(t)
	const merge, source = "feedfacefeedfacefeedfacefeedfacefeedface", "0000000000000000000000000000000000000abc"
	h.env["CI_COMMIT_SHA"], h.env["CI_PIPELINE_ID"], h.env["CI_MERGE_REQUEST_EVENT_TYPE"] = merge, "901", "merged_result"
	h.env["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"] = source
	h.srv.AddPipeline(901, merge, "refs/merge-requests/7/merge", "drift-diff")
	rep := preview(t, added("a", map[string]string{"k": "v"}))
	for _, sha := range []string{"", merge, source} {
		opts := Options{Comment: true, Check: true}
		opts.GitLab.HeadSHA = sha
		if _, err := h.publish(t, rep, opts); err != nil {
			t.Fatalf("--gitlab-sha %q: %v", sha, err)
		}
	}
	st := h.srv.Statuses
	if len(st) != 3 || st[0]["sha"] != merge || st[0]["pipeline_id"] != float64(901) || st[1]["sha"] != merge || st[1]["pipeline_id"] != float64(901) ||
		st[2]["sha"] != source || st[2]["pipeline_id"] == float64(901) {
		t.Errorf("statuses = %+v", st)
	}
	for _, r := range h.srv.Received {
		if strings.HasSuffix(r.Path, "/statuses/"+source) && strings.Contains(r.Body, "pipeline_id") {
			t.Errorf("the source branch's status was sent with a pipeline: %s", r.Body)
		}
	}
}
