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
	"github.com/drift-gitops/drift/internal/gitlab/gitlabtest"
	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

const glToken = "glpat-drift-test-token"

// gitlabEnv sets what GitLab CI gives a merge request pipeline's job, pointing at srv,
// whose pipeline 900 runs the job's commit.
func gitlabEnv(t *testing.T, srv *gitlabtest.Server) {
	t.Helper()
	srv.AddPipeline(900, "abcdef0123456789abcdef0123456789abcdef01", "refs/merge-requests/7/head", "drift-diff")
	for k, v := range map[string]string{
		"GITLAB_CI": "true", "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7", "CI_API_V4_URL": srv.URL + "/api/v4",
		"CI_COMMIT_SHA": "abcdef0123456789abcdef0123456789abcdef01", "CI_PIPELINE_ID": "900",
		"CI_JOB_URL": "https://gitlab.example/acme/gitops/-/jobs/5", "CI_PIPELINE_URL": "https://gitlab.example/acme/gitops/-/pipelines/900",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
		"CI_JOB_TOKEN": "job-token-secret-value", "DRIFT_GITLAB_TOKEN": glToken,
	} {
		t.Setenv(k, v)
	}
}

// TestGitLabNoteFromThePipelinesEnvironment runs drift diff --gitlab-note in a merge
// request pipeline's job: the note and the commit status come from the CI_* variables
// alone, no token reaches the output, and a 403 leaves the exit code the diff's.
func TestGitLabNoteFromThePipelinesEnvironment(t *testing.T) {
	srv := gitlabtest.New(glToken)
	defer srv.Close()
	gitlabEnv(t, srv)
	ns := namespace(t)
	apply(t, "kubectl", cm(ns, "settings", "old"))
	// A manifest that quotes the job's tokens: both are scrubbed before anything is sent.
	r := repo(t, map[string]string{"settings.yaml": cm(ns, "settings", "new"), "tricky.yaml": cm(ns, "tricky", "\"/close\\n!12 ~bug @root "+glToken+" job-token-secret-value\"")})
	dotenv := filepath.Join(t.TempDir(), "drift.env")
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--gitlab-note", "--gitlab-dotenv", dotenv, "--json-report", filepath.Join(t.TempDir(), "r.json"))
	if o.code != 1 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	notes := srv.Notes(7)
	if len(notes) != 1 || !strings.HasPrefix(notes[0].Body, "<!-- drift:report targets=") || !strings.Contains(notes[0].Body, "### drift: 1 to add, 1 to modify") {
		t.Fatalf("notes = %+v\n%s", notes, o.stderr)
	}
	if len(srv.QuickActions) != 0 {
		t.Errorf("GitLab would run %v", srv.QuickActions)
	}
	if len(srv.Statuses) != 1 || srv.Statuses[0]["state"] != "success" || srv.Statuses[0]["sha"] != "abcdef0123456789abcdef0123456789abcdef01" || srv.Statuses[0]["name"] != "drift" {
		t.Errorf("statuses = %+v", srv.Statuses)
	}
	if data, err := os.ReadFile(dotenv); err != nil || !strings.Contains(string(data), "DRIFT_HAS_CHANGES=true") {
		t.Errorf("dotenv: %v\n%s", err, data)
	}
	if strings.Contains(o.stdout+o.stderr, glToken) || strings.Contains(o.stdout+o.stderr, "job-token-secret-value") {
		t.Error("a token reached the output")
	}
	for _, req := range srv.Received {
		if strings.Contains(req.Body, glToken) || strings.Contains(req.Body, "job-token-secret-value") {
			t.Errorf("%s %s sent a token in its body", req.Method, req.Path)
		}
	}

	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"403 Forbidden"}`)
		return true
	}
	o = drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--gitlab-note")
	if o.code != 1 || !strings.Contains(o.stderr, "GitLab refused to list the merge request's notes (403)") {
		t.Errorf("403: exit %d\n%s", o.code, o.stderr)
	}
}

// TestGitLabJobTokenAloneIsRefusedBeforeAnyWork: a job whose only token is
// CI_JOB_TOKEN is told at once that it cannot write notes and what to create; GitLab
// is not asked and nothing is previewed.
func TestGitLabJobTokenAloneIsRefusedBeforeAnyWork(t *testing.T) {
	srv := gitlabtest.New(glToken)
	defer srv.Close()
	gitlabEnv(t, srv)
	t.Setenv("DRIFT_GITLAB_TOKEN", "")
	o := drift(t, "diff", "--repo", t.TempDir(), "--gitlab-note")
	if o.code == 0 || !strings.Contains(o.stderr, "only CI_JOB_TOKEN, which GitLab does not let write merge request notes") ||
		!strings.Contains(o.stderr, "DRIFT_GITLAB_TOKEN") || strings.Contains(o.stderr, "job-token-secret-value") {
		t.Errorf("exit %d\n%s", o.code, o.stderr)
	}
	if len(srv.Received) != 0 {
		t.Error("GitLab was asked")
	}
}

// TestEveryGitLabFlagIsBound: each flag of the GitLab side, set on the command line,
// lands in app.GitLab.
func TestEveryGitLabFlagIsBound(t *testing.T) {
	t.Parallel()
	var o app.Run
	f := pflag.NewFlagSet("diff", pflag.ContinueOnError)
	bindGitLab(f, &o.GitLab)
	bindIssues(f, &o)
	args := []string{"--gitlab-note", "--gitlab-status=false", "--gitlab-token=tok", "--gitlab-project=acme/gitops", "--gitlab-mr=7",
		"--gitlab-api-url=https://gitlab.example/api/v4", "--gitlab-sha=abc", "--gitlab-dotenv=d.env", "--gitlab-issue"}
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	n := 0
	f.VisitAll(func(fl *pflag.Flag) {
		if strings.HasPrefix(fl.Name, "gitlab-") {
			n++
		}
	})
	if n != len(args) {
		t.Fatalf("%d GitLab flags, the test sets %d: set the new one", n, len(args))
	}
	want := app.GitLab{Note: true, Status: false, Token: "tok", Project: "acme/gitops", MR: 7, APIURL: "https://gitlab.example/api/v4", HeadSHA: "abc", Dotenv: "d.env", Issue: true}
	if o.GitLab != want {
		t.Errorf("bound %+v\nwant  %+v", o.GitLab, want)
	}
}

// TestEverySiteFlagIsBound: each flag of each forge of publish.Kinds, set on the
// command line, lands in that forge's app.Site, and --dotenv where --gitlab-dotenv
// does.
func TestEverySiteFlagIsBound(t *testing.T) {
	t.Parallel()
	for _, k := range publish.Kinds {
		var o app.Run
		f := pflag.NewFlagSet("diff", pflag.ContinueOnError)
		bindGitLab(f, &o.GitLab)
		bindSites(f, &o)
		bindIssues(f, &o)
		p := "--" + k.Flag + "-"
		args := []string{p + "comment", p + "status=false", p + "token=tok", p + "api-url=https://forge.example/api", p + "repository=acme/gitops",
			p + "pr=7", p + "sha=abc", p + "run-url=https://ci.example/job/7", p + "author=drift-bot", p + "issue"}
		if err := f.Parse(append(args, "--dotenv=d.env")); err != nil {
			t.Fatal(err)
		}
		n := 0
		f.VisitAll(func(fl *pflag.Flag) {
			if strings.HasPrefix(fl.Name, k.Flag+"-") {
				n++
			}
		})
		if n != len(args) {
			t.Fatalf("%d %s flags, the test sets %d: set the new one", n, k.Name, len(args))
		}
		want := app.Site{Comment: true, Status: false, Issue: true,
			CI: forge.CI{Token: "tok", APIURL: "https://forge.example/api", Repository: "acme/gitops", PR: 7, HeadSHA: "abc", RunURL: "https://ci.example/job/7", Author: "drift-bot"}}
		if got := o.Sites[k.Flag]; got == nil || !reflect.DeepEqual(*got, want) || o.GitLab.Dotenv != "d.env" {
			t.Errorf("%s: bound %+v (dotenv %q)\nwant  %+v", k.Name, got, o.GitLab.Dotenv, want)
		}
	}
}
