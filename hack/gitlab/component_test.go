// Package gitlab runs the GitLab CI/CD component's script (templates/drift/template.yml)
// as a GitLab runner would, against a GitLab stand-in and a local release server
// holding a drift built from this tree.
package gitlab

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/gitlab/gitlabtest"
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

// run runs the job's script in dir as the runner does: the lines in one shell.
func (c component) run(t *testing.T, dir string, env []string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", strings.Join(c.script, "\n"))
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// releaseServer serves a release of drift built from this tree as GitHub serves
// releases (drift_<version>_<os>_<arch>.tar.gz and checksums.txt under
// /download/<tag>/) and install.sh, as raw.githubusercontent.com would.
func releaseServer(t *testing.T) *httptest.Server {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "drift")
	build := exec.Command("go", "build", "-o", bin, "./cmd/drift")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	_ = tw.WriteHeader(&tar.Header{Name: "drift", Mode: 0o755, Size: int64(len(data))})
	_, _ = tw.Write(data)
	_ = tw.Close()
	_ = gz.Close()
	asset := fmt.Sprintf("drift_%s_%s_%s.tar.gz", strings.TrimPrefix(version, "v"), runtime.GOOS, runtime.GOARCH)
	sum := sha256.Sum256(buf.Bytes())
	files := map[string][]byte{
		"/download/" + version + "/" + asset:          buf.Bytes(),
		"/download/" + version + "/checksums.txt":     []byte(hex.EncodeToString(sum[:]) + "  " + asset + "\n"),
		"/drift-gitops/drift/main/install.sh":         must(os.ReadFile("../../install.sh")),
		"/download/" + version + "/checksums.txt.sig": nil,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if data, ok := files[r.URL.Path]; ok {
			w.Write(data)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
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

// TestTheComponentPreviewsAMergeRequest runs the component's script as a merge
// request pipeline would: it installs the release (checksum verified) from the
// release server, previews the merge request on an ephemeral API server loaded with
// the base, writes the note and the commit status to the GitLab stand-in, and leaves
// the reports and the dotenv report (DRIFT_REPORT_JSON naming the JSON artifact) in
// drift-report/. Run again after a push, it updates the same note. Then, as a parallel job
// of two and a merge job, the shards publish nothing and the merge publishes the
// same note once more.
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
	tmp := t.TempDir()
	ci := map[string]string{
		"GITLAB_CI": "true", "CI": "true", "CI_PIPELINE_SOURCE": "merge_request_event", "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7",
		"CI_API_V4_URL": srv.URL + "/api/v4", "CI_COMMIT_SHA": head, "CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_PIPELINE_ID": "900",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
		"CI_JOB_URL": "https://gitlab.example/acme/gitops/-/jobs/5", "CI_PIPELINE_URL": "https://gitlab.example/acme/gitops/-/pipelines/900",
		"CI_JOB_TOKEN": "job-token-component-value", "DRIFT_GITLAB_TOKEN": token, "TMPDIR": tmp, "XDG_CACHE_HOME": filepath.Join(tmp, "cache"),
		"DRIFT_RELEASES_URL": rel.URL + "/download", "KUBECONFIG": "/dev/null",
	}
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
	if len(st) != 1 || st[0]["sha"] != head || st[0]["state"] != "success" || st[0]["name"] != "drift" ||
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
	if strings.Contains(log, token) || strings.Contains(log, "job-token-component-value") {
		t.Error("a token is in the job's log")
	}

	// A push: a new pipeline, a fresh clone (without the last job's artifacts), the
	// same note, updated.
	if err := os.RemoveAll(filepath.Join(repo.Dir, "drift-report")); err != nil {
		t.Fatal(err)
	}
	head, err = repo.CommitFiles(map[string]string{"apps/web.yaml": cm("web", "yellow")}, "a push")
	if err != nil {
		t.Fatal(err)
	}
	ci["CI_COMMIT_SHA"] = head
	if code, log := c.run(t, repo.Dir, c.env(t, inputs, ci)); code != 0 || !strings.Contains(log, "drift: updated the merge request note") {
		t.Fatalf("after a push (%d):\n%s", code, log)
	}
	if n := srv.Notes(7); len(n) != 1 || n[0].ID != notes[0].ID || !strings.Contains(n[0].Body, "+  color: yellow") {
		t.Fatalf("notes after a push = %+v", n)
	}

	// parallel: 2, then a merge job: the shards publish nothing, the merge once.
	writes := srv.Writes
	for i := 1; i <= 2; i++ {
		ci["CI_NODE_INDEX"], ci["CI_NODE_TOTAL"] = fmt.Sprint(i), "2"
		if code, log := c.run(t, repo.Dir, c.env(t, map[string]string{"version": version, "cluster": "ephemeral", "parallel": "2",
			"install-url": inputs["install-url"]}, ci)); code != 0 {
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
}
