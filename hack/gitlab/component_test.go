// Package gitlab runs the GitLab CI/CD component's script (templates/drift/template.yml)
// as a GitLab runner would, against a GitLab stand-in and a local release server
// holding a drift built from this tree.
package gitlab

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/gitlab/gitlabtest"
	"github.com/drift-gitops/drift/internal/releasetest"
	"github.com/drift-gitops/drift/internal/testenv"
)

const (
	token   = "glpat-component-test-token"
	version = "v9.9.9"
)

// component is the component's spec and its one job.
type component struct {
	inputs map[string]struct {
		Default any `yaml:"default"`
	}
	variables map[string]string
	script    []string
}

// readComponent reads templates/drift/template.yml: the spec's inputs, then the job.
func readComponent(t *testing.T) component {
	t.Helper()
	data, err := os.ReadFile("../../templates/drift/template.yml")
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(string(data), "\n---\n")
	if !ok {
		t.Fatal("the component has no spec document")
	}
	var spec struct {
		Spec struct {
			Inputs map[string]struct {
				Default any `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(head), &spec); err != nil {
		t.Fatal(err)
	}
	var jobs map[string]struct {
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
	}
	if err := yaml.Unmarshal([]byte(body), &jobs); err != nil {
		t.Fatal(err)
	}
	job, ok := jobs["drift-$[[ inputs.mode ]]"]
	if !ok || len(jobs) != 1 {
		t.Fatalf("the component's jobs are %v, want drift-$[[ inputs.mode ]] alone", jobs)
	}
	return component{inputs: spec.Spec.Inputs, variables: job.Variables, script: job.Script}
}

var interpolation = regexp.MustCompile(`\$\[\[ inputs\.([a-z-]+) \]\]`)

// env is the job's environment as GitLab makes it: ci (the predefined and project
// variables), then the job's variables, inputs interpolated and $VARIABLES expanded.
func (c component) env(t *testing.T, inputs, ci map[string]string) []string {
	t.Helper()
	env := os.Environ()
	for k, v := range ci {
		env = append(env, k+"="+v)
	}
	for k, v := range c.variables {
		v = interpolation.ReplaceAllStringFunc(v, func(m string) string {
			name := interpolation.FindStringSubmatch(m)[1]
			in, ok := c.inputs[name]
			if !ok {
				t.Fatalf("variable %s uses the undeclared input %s", k, name)
			}
			if given, ok := inputs[name]; ok {
				return given
			}
			return fmt.Sprint(in.Default)
		})
		env = append(env, k+"="+os.Expand(v, func(name string) string { return ci[name] }))
	}
	return env
}

// run runs the job's script in dir as the runner does: the lines in one shell, with
// GitLab's cache of the job's paths (.drift-cache/) restored into the checkout before
// it and saved after it, and the checkout left clean of it, as the next job's clone is.
func (c component) run(t *testing.T, dir string, env []string) (int, string) {
	t.Helper()
	saved := filepath.Join(filepath.Dir(dir), ".gitlab-cache-"+filepath.Base(dir))
	if fileExists(saved) {
		if out, err := exec.Command("cp", "-R", saved+"/.", filepath.Join(dir, ".drift-cache")).CombinedOutput(); err != nil {
			t.Fatalf("restoring the cache: %v\n%s", err, out)
		}
	}
	cmd := exec.Command("sh", "-c", strings.Join(c.script, "\n"))
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.CombinedOutput()
	if fileExists(filepath.Join(dir, ".drift-cache")) {
		if err := os.RemoveAll(saved); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, ".drift-cache"), saved); err != nil {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// releaseServer serves a release of drift built from this tree (releasetest.Serve).
func releaseServer(t *testing.T) *httptest.Server {
	srv, _ := releaseServerOf(t)
	return srv
}

// releaseServerOf is releaseServer, and the path of the drift it serves.
func releaseServerOf(t *testing.T) (*httptest.Server, string) {
	return releasetest.Serve(t, "../..", version)
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

// ciEnv is what GitLab gives every job of the project's pipelines against the
// stand-in, with the drift release served by rel; each test adds its pipeline's.
func ciEnv(t *testing.T, srv *gitlabtest.Server, rel *httptest.Server) map[string]string {
	tmp := t.TempDir()
	return map[string]string{
		"GITLAB_CI": "true", "CI": "true", "CI_PROJECT_ID": "42", "CI_API_V4_URL": srv.URL + "/api/v4", "CI_DEFAULT_BRANCH": "main",
		"CI_JOB_URL": "https://gitlab.example/acme/gitops/-/jobs/5", "CI_PIPELINE_URL": "https://gitlab.example/acme/gitops/-/pipelines/900",
		"CI_JOB_TOKEN": "job-token-component-value", "DRIFT_GITLAB_TOKEN": token, "TMPDIR": tmp, "XDG_CACHE_HOME": filepath.Join(tmp, "cache"),
		"DRIFT_RELEASES_URL": rel.URL + "/download",
	}
}

// mergeRequestEnv is a merge request pipeline's (pipeline 900 of commit head).
func mergeRequestEnv(t *testing.T, srv *gitlabtest.Server, rel *httptest.Server, base, head string) map[string]string {
	ci := ciEnv(t, srv, rel)
	for k, v := range map[string]string{
		"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_EVENT_TYPE": "detached",
		"CI_COMMIT_SHA": head, "CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_MERGE_REQUEST_TARGET_BRANCH_SHA": "", "CI_PIPELINE_ID": "900",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "KUBECONFIG": "/dev/null",
	} {
		ci[k] = v
	}
	srv.AddPipeline(900, head, "refs/merge-requests/7/head", "drift-diff")
	return ci
}

// noTokenIn fails the test if the job's log holds a token.
func noTokenIn(t *testing.T, log string) {
	t.Helper()
	if strings.Contains(log, token) || strings.Contains(log, "job-token-component-value") {
		t.Error("a token is in the job's log")
	}
}

// TestTheComponentPreviewsAMergeRequest runs the component's script as a merge
// request pipeline would: it installs the release (checksum verified) from the
// release server, previews the merge request on an ephemeral API server loaded with
// the base, writes the note and the commit status to the GitLab stand-in, and leaves
// the reports and the dotenv report (DRIFT_REPORT_JSON naming the JSON artifact) in
// drift-report/. Run again after a push, in the push's pipeline, it updates the same
// note. Then, as a parallel job of two and a merge job, the shards publish nothing and
// the merge publishes the same note once more. Last, in a merged results pipeline,
// the preview is of the merge commit against the target branch's commit it was made
// on, and the status goes on the merge commit, in that pipeline.
func TestTheComponentPreviewsAMergeRequest(t *testing.T) {
	testenv.Require(t)
	c := readComponent(t)
	rel := releaseServer(t)
	srv := gitlabtest.New(token)
	defer srv.Close()

	repo, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base, err := repo.CommitFiles(map[string]string{"apps/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "apps/web.yaml": cm("web", "blue")}, "base")
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.CommitFiles(map[string]string{"apps/web.yaml": cm("web", "green"), "apps/api.yaml": cm("api", "red")}, "the change")
	if err != nil {
		t.Fatal(err)
	}
	ci := mergeRequestEnv(t, srv, rel, base, head)
	inputs := map[string]string{"version": version, "cluster": "ephemeral", "install-url": rel.URL + "/drift-gitops/drift/main/install.sh"}

	code, log := c.run(t, repo.Dir, c.env(t, inputs, ci))
	if code != 0 {
		t.Fatalf("the job failed (%d):\n%s", code, log)
	}
	if !strings.Contains(log, "drift: created the merge request note") || !strings.Contains(log, "drift: set the commit status on "+head) {
		t.Errorf("log:\n%s", log)
	}
	notes := srv.Notes(7)
	if len(notes) != 1 || !strings.Contains(notes[0].Body, "### drift: 1 to add, 1 to modify") || !strings.Contains(notes[0].Body, "+  color: green") {
		t.Fatalf("notes = %+v\n%s", notes, log)
	}
	st := srv.Statuses
	if len(st) != 1 || st[0]["sha"] != head || st[0]["pipeline_id"] != float64(900) || st[0]["state"] != "success" || st[0]["name"] != "drift" ||
		st[0]["target_url"] != "https://gitlab.example/acme/gitops/-/jobs/5/artifacts/file/drift-report/report.html" {
		t.Errorf("statuses = %+v", st)
	}
	dotenv := string(must(os.ReadFile(filepath.Join(repo.Dir, "drift-report", "drift.env"))))
	if !strings.Contains(dotenv, "DRIFT_REPORT_JSON=drift-report/report.json\n") || !strings.Contains(dotenv, "DRIFT_HAS_CHANGES=true\n") {
		t.Errorf("dotenv:\n%s", dotenv)
	}
	for _, f := range []string{"report.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(repo.Dir, "drift-report", f)); err != nil {
			t.Errorf("artifact %s: %v", f, err)
		}
	}
	noTokenIn(t, log)

	// A push: a new pipeline, a fresh clone (without the last job's artifacts), the
	// same note, updated.
	if err := os.RemoveAll(filepath.Join(repo.Dir, "drift-report")); err != nil {
		t.Fatal(err)
	}
	head, err = repo.CommitFiles(map[string]string{"apps/web.yaml": cm("web", "yellow")}, "a push")
	if err != nil {
		t.Fatal(err)
	}
	ci["CI_COMMIT_SHA"], ci["CI_PIPELINE_ID"] = head, "902"
	srv.AddPipeline(902, head, "refs/merge-requests/7/head", "drift-diff")
	if code, log := c.run(t, repo.Dir, c.env(t, inputs, ci)); code != 0 || !strings.Contains(log, "drift: updated the merge request note") {
		t.Fatalf("after a push (%d):\n%s", code, log)
	}
	if n := srv.Notes(7); len(n) != 1 || n[0].ID != notes[0].ID || !strings.Contains(n[0].Body, "+  color: yellow") {
		t.Fatalf("notes after a push = %+v", n)
	}
	if st := srv.Statuses; len(st) != 2 || st[1]["sha"] != head || st[1]["pipeline_id"] != float64(902) {
		t.Errorf("statuses after a push = %+v", st)
	}

	// parallel: 2 (GitLab sets CI_NODE_INDEX of CI_NODE_TOTAL), then a merge job: the
	// shards publish nothing, the merge once.
	writes := srv.Writes
	for i := 1; i <= 2; i++ {
		ci["CI_NODE_INDEX"], ci["CI_NODE_TOTAL"] = fmt.Sprint(i), "2"
		if code, log := c.run(t, repo.Dir, c.env(t, inputs, ci)); code != 0 || !fileExists(filepath.Join(repo.Dir, "drift-report", fmt.Sprintf("shard-%d.json", i))) {
			t.Fatalf("shard %d (%d):\n%s", i, code, log)
		}
	}
	if srv.Writes != writes {
		t.Errorf("the shards wrote to GitLab: %v", srv.Requests()[len(srv.Requests())-3:])
	}
	delete(ci, "CI_NODE_INDEX")
	delete(ci, "CI_NODE_TOTAL")
	merge := map[string]string{"mode": "merge", "version": version, "install-url": inputs["install-url"]}
	if code, log := c.run(t, repo.Dir, c.env(t, merge, ci)); code != 0 || !strings.Contains(log, "drift: updated the merge request note") {
		t.Fatalf("merge (%d):\n%s", code, log)
	}
	if n := srv.Notes(7); len(n) != 1 || !strings.Contains(n[0].Body, "+  color: yellow") || len(srv.Statuses) != 3 {
		t.Errorf("after the merge: %+v, %d statuses", n, len(srv.Statuses))
	}

	// A merged results pipeline: the target branch gained a ConfigMap since the merge
	// base; GitLab merged the source branch onto it. The preview is of the merge
	// request's change alone (not the target's ConfigMap), and the status goes on the
	// merge commit, the pipeline's.
	source := head
	// The shards' and the merge's reports are the jobs' artifacts, not the repository's.
	if err := os.RemoveAll(filepath.Join(repo.Dir, "drift-report")); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Git("checkout", "-q", "--detach", base); err != nil {
		t.Fatal(err)
	}
	tip, err := repo.CommitFiles(map[string]string{"apps/db.yaml": cm("db", "white")}, "the target branch moves on")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature' into 'main'", source); err != nil {
		t.Fatal(err)
	}
	mergeCommit, err := repo.Git("rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"CI_MERGE_REQUEST_EVENT_TYPE": "merged_result", "CI_COMMIT_SHA": mergeCommit, "CI_PIPELINE_ID": "903",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": source, "CI_MERGE_REQUEST_TARGET_BRANCH_SHA": tip} {
		ci[k] = v
	}
	srv.AddPipeline(903, mergeCommit, "refs/merge-requests/7/merge", "drift-diff")
	code, log = c.run(t, repo.Dir, c.env(t, inputs, ci))
	if code != 0 || !strings.Contains(log, "drift: set the commit status on "+mergeCommit) {
		t.Fatalf("merged results pipeline (%d):\n%s", code, log)
	}
	if n := srv.Notes(7); len(n) != 1 || !strings.Contains(n[0].Body, "### drift: 1 to add, 1 to modify") || strings.Contains(n[0].Body, "ConfigMap shop/db") ||
		!strings.Contains(n[0].Body, "Preview of commit `"+mergeCommit[:12]+"`") {
		t.Errorf("merged results note (want the merge commit's change from the target branch's tip alone, without the tip's own db): %+v", n)
	}
	if st := srv.Statuses; len(st) != 4 || st[3]["sha"] != mergeCommit || st[3]["pipeline_id"] != float64(903) {
		t.Errorf("merged results status = %+v", st[len(st)-1])
	}
	noTokenIn(t, log)
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// TestTheComponentFailsOnThePolicyAndNamesTheTargets: with fail-on the job fails
// when the report meets the policy (exit status 3), and so does the commit status;
// with targets, only those are previewed and the status is named after them.
func TestTheComponentFailsOnThePolicyAndNamesTheTargets(t *testing.T) {
	testenv.Require(t)
	c := readComponent(t)
	rel := releaseServer(t)
	srv := gitlabtest.New(token)
	defer srv.Close()
	repo, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	config := "version: 1\ntargets:\n  - name: shop\n    path: apps\n  - name: other\n    path: other\n"
	base, err := repo.CommitFiles(map[string]string{"drift.yaml": config, "apps/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
		"apps/web.yaml": cm("web", "blue"), "other/other.yaml": cm("other", "blue")}, "base")
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.CommitFiles(map[string]string{"apps/web.yaml": cm("web", "green"), "other/other.yaml": cm("other", "green")}, "the change")
	if err != nil {
		t.Fatal(err)
	}
	ci := mergeRequestEnv(t, srv, rel, base, head)
	inputs := map[string]string{"version": version, "cluster": "ephemeral", "install-url": rel.URL + "/drift-gitops/drift/main/install.sh",
		"fail-on": "change", "targets": "shop"}
	code, log := c.run(t, repo.Dir, c.env(t, inputs, ci))
	if code != 3 || !strings.Contains(log, "drift: exit status 3") {
		t.Fatalf("the job passed a report that fails the policy (%d):\n%s", code, log)
	}
	if st := srv.Statuses; len(st) != 1 || st[0]["state"] != "failed" || st[0]["name"] != "drift (shop)" || st[0]["sha"] != head {
		t.Errorf("statuses = %+v", st)
	}
	if n := srv.Notes(7); len(n) != 1 || !strings.Contains(n[0].Body, "+  color: green") || strings.Contains(n[0].Body, "ConfigMap shop/other") {
		t.Errorf("notes (want target shop's change alone) = %+v", n)
	}
	if dotenv := string(must(os.ReadFile(filepath.Join(repo.Dir, "drift-report", "drift.env")))); !strings.Contains(dotenv, "DRIFT_POLICY_FAILED=true\n") {
		t.Errorf("dotenv:\n%s", dotenv)
	}
	noTokenIn(t, log)
}

// TestTheComponentKeepsTheDriftIssueOnASchedule runs mode detect as a scheduled
// pipeline of the default branch would, against a real API server: the first run
// finds a ConfigMap of the repository missing from the cluster and opens the drift
// issue; once the drift changes (the ConfigMap is there, another color), the issue is
// updated; a parallel detect of two and a merge job keep the same issue (the merge,
// outside a merge request, keeps the issue and writes no note), finding nothing new;
// once the cluster matches, the issue is closed.
func TestTheComponentKeepsTheDriftIssueOnASchedule(t *testing.T) {
	env := testenv.StartFor(t)
	c := readComponent(t)
	rel := releaseServer(t)
	srv := gitlabtest.New(token)
	defer srv.Close()
	repo, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.CommitFiles(map[string]string{"apps/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "apps/web.yaml": cm("web", "blue")}, "main")
	if err != nil {
		t.Fatal(err)
	}
	ci := ciEnv(t, srv, rel)
	for k, v := range map[string]string{"CI_PIPELINE_SOURCE": "schedule", "CI_COMMIT_SHA": head, "CI_COMMIT_BRANCH": "main", "CI_PIPELINE_ID": "950",
		"KUBECONFIG": env.Kubeconfig} {
		ci[k] = v
	}
	detect := map[string]string{"mode": "detect", "version": version, "install-url": rel.URL + "/drift-gitops/drift/main/install.sh"}
	run := func(inputs map[string]string, want string) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(repo.Dir, "drift-report")); err != nil {
			t.Fatal(err)
		}
		code, log := c.run(t, repo.Dir, c.env(t, inputs, ci))
		if code != 0 || !strings.Contains(log, want) {
			t.Fatalf("want %q (%d):\n%s", want, code, log)
		}
		noTokenIn(t, log)
	}

	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	run(detect, "drift: opened issue #1")
	if is := srv.Issues[1]; is == nil || is.State != "opened" || !slices.Equal(is.Labels, []string{"drift"}) || !strings.Contains(is.Title, "(1 to add)") {
		t.Fatalf("issue = %+v", is)
	}

	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Data: map[string]string{"color": "green"}}
	if web, err = cs.CoreV1().ConfigMaps("shop").Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	run(detect, "drift: updated issue #1")
	if is := srv.Issues[1]; !strings.Contains(is.Title, "(1 to modify)") || len(srv.Issues) != 1 {
		t.Fatalf("issues = %+v", srv.Issues)
	}

	writes := srv.Writes
	for i := 1; i <= 2; i++ {
		ci["CI_NODE_INDEX"], ci["CI_NODE_TOTAL"] = fmt.Sprint(i), "2"
		code, log := c.run(t, repo.Dir, c.env(t, detect, ci))
		if code != 0 || !fileExists(filepath.Join(repo.Dir, "drift-report", fmt.Sprintf("shard-%d.json", i))) {
			t.Fatalf("shard %d (%d):\n%s", i, code, log)
		}
	}
	delete(ci, "CI_NODE_INDEX")
	delete(ci, "CI_NODE_TOTAL")
	if srv.Writes != writes {
		t.Errorf("the shards wrote to GitLab: %v", srv.Requests()[len(srv.Requests())-3:])
	}
	code, log := c.run(t, repo.Dir, c.env(t, map[string]string{"mode": "merge", "version": version, "install-url": detect["install-url"]}, ci))
	if code != 0 || !strings.Contains(log, "drift: issue #1 is up to date (the drift did not change)") {
		t.Fatalf("merge of the shards (%d):\n%s", code, log)
	}
	if len(srv.Notes(7)) != 0 || len(srv.Issues) != 1 || srv.Writes != writes {
		t.Errorf("the merge wrote %d writes, %d notes, %d issues", srv.Writes-writes, len(srv.Notes(7)), len(srv.Issues))
	}

	web.Data["color"] = "blue"
	if _, err := cs.CoreV1().ConfigMaps("shop").Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	run(detect, "drift: closed issue #1")
	if is := srv.Issues[1]; is.State != "closed" || len(srv.IssueNotes[1]) != 1 {
		t.Errorf("issue = %+v, notes %+v", is, srv.IssueNotes[1])
	}
	if len(srv.Statuses) != 0 || len(srv.Notes(7)) != 0 {
		t.Errorf("a scheduled pipeline set %d statuses and wrote %d notes", len(srv.Statuses), len(srv.Notes(7)))
	}
}
