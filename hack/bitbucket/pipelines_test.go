// Package bitbucket runs the Bitbucket Pipelines step (templates/bitbucket) as the
// Pipelines runner would, against the Bitbucket stand-in and a local release server
// holding a drift built from this tree.
package bitbucket

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/drift-gitops/drift/internal/bitbucket/bitbuckettest"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/releasetest"
	"github.com/drift-gitops/drift/internal/testenv"
)

const (
	token   = "bitbucket-pipelines-test-token"
	version = "v9.9.9"
)

// step is the template's step definition and the pipeline it exports.
type step struct {
	Name      string   `yaml:"name"`
	Image     string   `yaml:"image"`
	Caches    []string `yaml:"caches"`
	Script    []string `yaml:"script"`
	Artifacts []string `yaml:"artifacts"`
	Outputs   []string `yaml:"output-variables"`
}

// readStep reads templates/bitbucket/bitbucket-pipelines.yml: its cache, its step and
// the exported pipeline, which must be that step.
func readStep(t *testing.T) step {
	t.Helper()
	data, err := os.ReadFile("../../templates/bitbucket/bitbucket-pipelines.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Export      bool `yaml:"export"`
		Definitions struct {
			Caches    map[string]string            `yaml:"caches"`
			Steps     []map[string]step            `yaml:"steps"`
			Pipelines map[string][]map[string]step `yaml:"pipelines"`
		} `yaml:"definitions"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	d := file.Definitions
	if len(d.Steps) != 1 || !file.Export || d.Caches["drift"] != ".drift-cache" {
		t.Fatalf("the template's definitions are %+v", d)
	}
	s := d.Steps[0]["step"]
	exported := d.Pipelines["drift"]
	if len(exported) != 1 || fmt.Sprint(exported[0]["step"]) != fmt.Sprint(s) {
		t.Fatalf("the exported pipeline is not the step: %+v", exported)
	}
	if len(s.Script) == 0 || len(s.Caches) != 1 || s.Caches[0] != "drift" || len(s.Artifacts) != 1 || s.Artifacts[0] != "drift-report/**" {
		t.Fatalf("the step is %+v", s)
	}
	return s
}

// run runs the step's script in dir as the runner does (bash, in the clone), with
// Pipelines' cache of .drift-cache restored before it and saved after it.
func (s step) run(t *testing.T, dir string, env map[string]string) (int, string) {
	t.Helper()
	saved := filepath.Join(filepath.Dir(dir), ".pipelines-cache")
	if _, err := os.Stat(saved); err == nil {
		if out, err := exec.Command("cp", "-R", saved, filepath.Join(dir, ".drift-cache")).CombinedOutput(); err != nil {
			t.Fatalf("restoring the cache: %v\n%s", err, out)
		}
	}
	cmd := exec.Command("bash", "-c", strings.Join(s.Script, "\n"))
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, _ := cmd.CombinedOutput()
	if _, err := os.Stat(filepath.Join(dir, ".drift-cache")); err == nil {
		_ = os.RemoveAll(saved)
		if err := os.Rename(filepath.Join(dir, ".drift-cache"), saved); err != nil {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// releaseServer serves a release of drift built from this tree (releasetest.Serve).
func releaseServer(t *testing.T) *httptest.Server {
	srv, _ := releasetest.Serve(t, "../..", version)
	return srv
}

func must(data []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return data
}

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: shop}\ndata: {color: COLOR}\n"

func cm(name, color string) string {
	return strings.NewReplacer("NAME", name, "COLOR", color).Replace(configMap)
}

// clone is what Pipelines checks out for a pull request from feature to main: a clone
// of 50 commits of the source branch, the destination branch merged into it; the
// destination is not among the clone's branches.
func clone(t *testing.T, origin string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "build")
	for _, args := range [][]string{
		{"clone", "-q", "--depth", "50", "--single-branch", "--branch", "feature", "file://" + origin, dir},
		{"-C", dir, "fetch", "-q", "--depth", "50", "origin", "main"},
		{"-C", dir, "-c", "user.name=pipelines", "-c", "user.email=pipelines@example.com", "merge", "-q", "--no-edit", "FETCH_HEAD"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// TestTheStepPreviewsAPullRequest runs the step as a pull-requests pipeline would:
// it installs the release (checksum verified), compares the merge Pipelines made with
// the destination branch's tip (which it fetches: the clone has only the source
// branch), so that what main gained since the branch was made is not the pull
// request's change, writes the comment and the build status to the stand-in, and
// leaves the reports and the output variables. Run again after a push, it updates
// the same comment.
func TestTheStepPreviewsAPullRequest(t *testing.T) {
	testenv.Require(t)
	s := readStep(t)
	rel := releaseServer(t)
	srv := bitbuckettest.New(bitbuckettest.Cloud, token)
	defer srv.Close()

	origin, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := origin.CommitFiles(map[string]string{"apps/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "apps/web.yaml": cm("web", "blue")}, "base"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"branch", "-M", "main"}, {"checkout", "-q", "-b", "feature"}} {
		if _, err := origin.Git(args...); err != nil {
			t.Fatal(err)
		}
	}
	head, err := origin.CommitFiles(map[string]string{"apps/web.yaml": cm("web", "green")}, "the change")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := origin.Git("checkout", "-q", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := origin.CommitFiles(map[string]string{"apps/other.yaml": cm("other", "grey")}, "main moves on"); err != nil {
		t.Fatal(err)
	}
	if _, err := origin.Git("checkout", "-q", "feature"); err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	outputs := filepath.Join(tmp, "pipelines-variables")
	env := map[string]string{
		"CI": "true", "BITBUCKET_BUILD_NUMBER": "12", "BITBUCKET_PIPELINE_UUID": "{0b7e0c6e-8f51-4f4a-a3d4-5b2e7f0d1c9a}", "BITBUCKET_STEP_UUID": "{5c1d}",
		"BITBUCKET_WORKSPACE": "acme", "BITBUCKET_REPO_SLUG": "gitops", "BITBUCKET_REPO_FULL_NAME": "acme/gitops",
		"BITBUCKET_GIT_HTTP_ORIGIN": "http://bitbucket.org/acme/gitops", "BITBUCKET_BRANCH": "feature", "BITBUCKET_PR_ID": "7",
		"BITBUCKET_PR_DESTINATION_BRANCH": "main", "BITBUCKET_COMMIT": head, "BITBUCKET_STEP_OIDC_TOKEN": "oidc-token-value",
		"BITBUCKET_PIPELINES_VARIABLES_PATH": outputs,
		"DRIFT_BITBUCKET_TOKEN":              token, "DRIFT_BITBUCKET_AUTHOR": bitbuckettest.RepositoryBot.UUID,
		"DRIFT_VERSION": version, "DRIFT_INSTALL_URL": rel.URL + "/drift-gitops/drift/main/install.sh", "DRIFT_RELEASES_URL": rel.URL + "/download",
		"DRIFT_CLUSTER": "ephemeral", "DRIFT_ARGS": "--bitbucket-api-url " + srv.APIURL(),
		"TMPDIR": tmp, "XDG_CACHE_HOME": filepath.Join(tmp, "cache"), "KUBECONFIG": "/dev/null",
	}

	dir := clone(t, origin.Dir)
	code, log := s.run(t, dir, env)
	if code != 0 {
		t.Fatalf("the step failed (%d):\n%s", code, log)
	}
	comments := srv.Comments()
	if len(comments) != 1 || !strings.Contains(comments[0].Text, "### drift: 1 to modify") || !strings.Contains(comments[0].Text, "+  color: green") ||
		strings.Contains(comments[0].Text, "other") || strings.Contains(comments[0].Text, "<details>") || !strings.HasPrefix(comments[0].Text, "[//]: # (drift:report") {
		t.Fatalf("comments = %+v\n%s", comments, log)
	}
	st := srv.Statuses[head]["drift"]
	if st == nil || st["state"] != "SUCCESSFUL" || st["url"] != "https://bitbucket.org/acme/gitops/pipelines/results/12" || st["description"] != "1 to modify" {
		t.Errorf("statuses = %+v\n%s", srv.Statuses, log)
	}
	vars := string(must(os.ReadFile(outputs)))
	if !strings.Contains(vars, "DRIFT_HAS_CHANGES=true\n") || !strings.Contains(vars, "DRIFT_REPORT_JSON=drift-report/report.json\n") {
		t.Errorf("output variables:\n%s", vars)
	}
	for _, f := range []string{"report.json", "report.html", "drift.env"} {
		if _, err := os.Stat(filepath.Join(dir, "drift-report", f)); err != nil {
			t.Errorf("artifact %s: %v", f, err)
		}
	}
	for _, secret := range []string{token, "oidc-token-value"} {
		if strings.Contains(log, secret) {
			t.Errorf("%q is in the step's log", secret)
		}
	}
	for _, r := range srv.Received {
		if r.Authorization != "Bearer "+token || strings.Contains(r.Body, token) || strings.Contains(r.Body, "oidc-token-value") {
			t.Errorf("%s %s carried %q", r.Method, r.Path, r.Authorization)
		}
	}

	// A push: a new pipeline, a fresh clone, the same comment, updated.
	if head, err = origin.CommitFiles(map[string]string{"apps/web.yaml": cm("web", "yellow")}, "a push"); err != nil {
		t.Fatal(err)
	}
	env["BITBUCKET_COMMIT"], env["BITBUCKET_BUILD_NUMBER"] = head, "13"
	if code, log := s.run(t, clone(t, origin.Dir), env); code != 0 || !strings.Contains(log, "updated") {
		t.Fatalf("after a push (%d):\n%s", code, log)
	}
	if c := srv.Comments(); len(c) != 1 || c[0].ID != comments[0].ID || !strings.Contains(c[0].Text, "+  color: yellow") {
		t.Fatalf("comments after a push = %+v", c)
	}
	if st := srv.Statuses[head]["drift"]; st == nil || st["url"] != "https://bitbucket.org/acme/gitops/pipelines/results/13" {
		t.Errorf("the push's status = %+v", srv.Statuses)
	}
}
