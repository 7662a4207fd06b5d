package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/github/githubtest"
)

// TestGitHubTokenStaysWithTheAPIHost: the API answers with a redirect to another
// host; drift refuses to follow it, says why, and the other host never gets the
// token (nor any request).
func TestGitHubTokenStaysWithTheAPIHost(t *testing.T) {
	other := githubtest.New(ghToken)
	defer other.Close()
	srv := githubtest.New(ghToken)
	defer srv.Close()
	srv.Fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		return true
	}
	actionsEnv(t, srv, 32)
	ns := namespace(t)
	r := repo(t, map[string]string{"cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: NS}\n", ns)})
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--github-comment")
	if o.code != 2 || !strings.Contains(o.stderr, "drift does not follow redirects to other hosts") {
		t.Errorf("exit %d\n%s", o.code, o.stderr)
	}
	if strings.Contains(o.stdout+o.stderr, ghToken) {
		t.Error("the token reached the output")
	}
	if len(other.Received) != 0 {
		t.Errorf("the other host was asked: %+v", other.Received)
	}
}

// TestActionPreviewsAFetchedCommitWithoutCheckingItOut is the fork workflow's run:
// the work tree is the base branch, the pull request's commit is only in the object
// store, and the Action's ref input names it. The preview is the pull request's, and
// its files never reach the work tree.
func TestActionPreviewsAFetchedCommitWithoutCheckingItOut(t *testing.T) {
	srv := githubtest.New(ghToken)
	defer srv.Close()
	actionsEnv(t, srv, 33)
	ns := namespace(t)
	a := sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: NS}\n", ns)
	apply(t, "kubectl", a)
	r := repo(t, map[string]string{"cm.yaml": a})
	base, _ := r.Git("rev-parse", "HEAD")
	if _, err := r.Git("checkout", "-q", "-b", "fork"); err != nil {
		t.Fatal(err)
	}
	head, err := r.CommitFiles(map[string]string{"from-fork.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: NS}\n", ns)}, "the pull request")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("checkout", "-q", "main"); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(t.TempDir(), "drift")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nDRIFT_TEST_RUN_MAIN=1 exec "+self+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(mustAbs(t, "../.."), "hack", "action", "run.sh"))
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "DRIFT_BIN="+wrapper, "RUNNER_TEMP="+t.TempDir(), "GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "output"),
		"KUBECONFIG="+env.Kubeconfig, "DRIFT_INPUT_REF="+strings.TrimSpace(head), "DRIFT_INPUT_BASE_REF="+strings.TrimSpace(base))
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if c := srv.Comments(33); len(c) != 1 || !strings.Contains(c[0].Body, "### drift: 1 to add") || !strings.Contains(c[0].Body, "`from-fork.yaml`") {
		t.Fatalf("comments = %+v\n%s", c, out)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "from-fork.yaml")); !os.IsNotExist(err) {
		t.Errorf("the pull request's file is in the work tree: %v", err)
	}
}
