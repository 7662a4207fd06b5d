// Package gitea runs the drift Action (action.yml) as a Gitea Actions runner
// (act_runner) runs it, against a Gitea stand-in and a local release server holding a
// drift built from this tree.
package gitea

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/drift-gitops/drift/internal/gitea/giteatest"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/releasetest"
	"github.com/drift-gitops/drift/internal/testenv"
)

const (
	token    = "gitea-action-test-token"
	jobToken = "gitea-job-token-value"
	version  = "v9.9.9"
)

// action is action.yml: its inputs' defaults and its steps.
type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Steps []struct {
			Name string            `yaml:"name"`
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			If   string            `yaml:"if"`
			Env  map[string]string `yaml:"env"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) action {
	t.Helper()
	var a action
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// eval is the few expressions action.yml's shell steps use, as act evaluates them:
// inputs.X (given, else the default), github.X and runner.temp from the job's
// context, and the install step's github.com test.
func (a action) eval(t *testing.T, s string, inputs, github map[string]string, temp string) string {
	t.Helper()
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			if v, ok := inputs[name]; ok {
				return v
			}
			in, ok := a.Inputs[name]
			if !ok {
				t.Fatalf("action.yml uses the undeclared input %s", name)
			}
			return a.eval(t, in.Default, inputs, github, temp)
		case e == "runner.temp":
			return temp
		case e == "github.server_url == 'https://github.com' && inputs.github-token || ''":
			if github["server_url"] == "https://github.com" {
				return a.eval(t, "${{ inputs.github-token }}", inputs, github, temp)
			}
			return ""
		case strings.HasPrefix(e, "github."):
			return github[strings.TrimPrefix(e, "github.")]
		}
		t.Fatalf("the test does not evaluate %q", e)
		return ""
	})
}

// step runs action.yml's shell step named name in dir, as act_runner does: the step's
// env evaluated over the job's, GITHUB_ACTION_PATH the Action's checkout, GITHUB_OUTPUT
// a fresh file read back into outputs.
func (a action) step(t *testing.T, name, dir string, job []string, inputs, github map[string]string, temp string) (int, string, map[string]string) {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.Name != name {
			continue
		}
		out := filepath.Join(t.TempDir(), "output")
		env := append([]string(nil), job...)
		env = append(env, "GITHUB_ACTION_PATH="+mustAbs(t, "../.."), "GITHUB_OUTPUT="+out, "RUNNER_TEMP="+temp)
		for k, v := range s.Env {
			env = append(env, k+"="+a.eval(t, v, inputs, github, temp))
		}
		cmd := exec.Command("bash", "-e", "-c", a.eval(t, s.Run, inputs, github, temp))
		cmd.Dir, cmd.Env = dir, env
		log, _ := cmd.CombinedOutput()
		outputs := map[string]string{}
		data, _ := os.ReadFile(out)
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				outputs[k] = v
			}
		}
		return cmd.ProcessState.ExitCode(), string(log), outputs
	}
	t.Fatalf("action.yml has no step %q", name)
	return 0, "", nil
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// releaseServer serves a release of drift built from this tree (releasetest.Serve).
func releaseServer(t *testing.T) *httptest.Server {
	srv, _ := releasetest.Serve(t, "../..", version)
	return srv
}

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: shop}\ndata: {color: COLOR}\n"

func cm(name, color string) string {
	return strings.NewReplacer("NAME", name, "COLOR", color).Replace(configMap)
}

// TestTheActionPreviewsAGiteaPullRequest runs action.yml's install and preview steps
// as act_runner runs them for a pull_request event: the release is installed from the
// release server (checksum verified), the pull request is previewed on an ephemeral
// API server loaded with the base, and the comment and the commit status go to the
// Gitea stand-in with the job token, never to GitHub. Run again after a push, it
// edits the same comment and sets a second status on the new head.
func TestTheActionPreviewsAGiteaPullRequest(t *testing.T) {
	testenv.Require(t)
	a := readAction(t)
	rel := releaseServer(t)
	srv := giteatest.New(token)
	defer srv.Close()
	srv.ActionsToken = jobToken
	pr := srv.AddPullRequest(giteatest.Someone, "the change")

	repo, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base, err := repo.CommitFiles(map[string]string{"apps/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "apps/web.yaml": cm("web", "blue")}, "base")
	if err != nil {
		t.Fatal(err)
	}
	var head string
	run := func(change map[string]string, want string) (string, map[string]string) {
		t.Helper()
		var err error
		if head, err = repo.CommitFiles(change, "a change"); err != nil {
			t.Fatal(err)
		}
		srv.AddCommit(head)
		tmp := t.TempDir()
		event := filepath.Join(tmp, "event.json")
		payload := fmt.Sprintf(`{"action":"synchronized","number":%d,"pull_request":{"number":%d,"base":{"ref":"main","sha":%q},"head":{"ref":"feature","sha":%q}}}`, pr, pr, base, head)
		if err := os.WriteFile(event, []byte(payload), 0o600); err != nil {
			t.Fatal(err)
		}
		// What act_runner gives a job (the GitHub names, from Gitea's context) and
		// GITEA_ACTIONS; github.* as the expressions see it.
		github := map[string]string{"server_url": srv.URL + "/", "api_url": srv.URL + "/api/v1", "repository": "acme/gitops", "sha": head,
			"token": jobToken, "action_ref": version, "action_repository": "drift-gitops/drift", "event.pull_request.base.sha": base,
			"head_ref": "feature", "base_ref": "main", "ref_name": fmt.Sprintf("%d/merge", pr), "run_id": "77", "run_attempt": "1",
			"event.repository.default_branch": "main"}
		job := append(os.Environ(), "GITEA_ACTIONS=true", "GITHUB_ACTIONS=true", "CI=true", "GITHUB_SERVER_URL="+srv.URL+"/",
			"GITHUB_API_URL="+srv.URL+"/api/v1", "GITHUB_REPOSITORY=acme/gitops", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH="+event,
			"GITHUB_SHA="+head, "GITHUB_REF=refs/pull/1/head", "GITHUB_BASE_REF=main", "GITHUB_HEAD_REF=feature", "GITHUB_RUN_ID=77",
			"GITHUB_RUN_NUMBER=12", "RUNNER_OS=Linux", "RUNNER_ARCH="+map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH],
			"DRIFT_RELEASES_URL="+rel.URL+"/download", "DRIFT_API_URL="+rel.URL+"/no-github-api", "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
			"TMPDIR="+tmp, "KUBECONFIG=/dev/null")
		inputs := map[string]string{"cluster": "ephemeral"}
		runnerTemp := filepath.Join(tmp, "runner")
		if err := os.MkdirAll(runnerTemp, 0o755); err != nil {
			t.Fatal(err)
		}
		code, log, out := a.step(t, "Install drift", repo.Dir, job, inputs, github, runnerTemp)
		if code != 0 || out["installed"] != "true" {
			t.Fatalf("install (%d, %v):\n%s", code, out, log)
		}
		// "Install the ephemeral API server" (drift setup) is left out: the test's
		// KUBEBUILDER_ASSETS (testenv) already names the API server drift runs.
		code, log, out = a.step(t, "Preview", repo.Dir, job, inputs, github, runnerTemp)
		if code != 0 || !strings.Contains(log, want) {
			t.Fatalf("preview: want %q (%d):\n%s", want, code, log)
		}
		if strings.Contains(log, jobToken) || strings.Contains(log, token) {
			t.Error("a token is in the step's log")
		}
		return log, out
	}

	_, out := run(map[string]string{"apps/web.yaml": cm("web", "green"), "apps/api.yaml": cm("api", "red")}, "drift: created the pull request comment")
	comments := srv.Comments(pr)
	if len(comments) != 1 || comments[0].User.Login != "gitea-actions" || !strings.Contains(comments[0].Body, "### drift: 1 to add, 1 to modify") ||
		!strings.Contains(comments[0].Body, "+  color: green") {
		t.Fatalf("comments = %+v", comments)
	}
	if out["has-changes"] != "true" || out["report-html"] == "" {
		t.Errorf("outputs = %v", out)
	}
	run(map[string]string{"apps/web.yaml": cm("web", "yellow")}, "drift: updated the pull request comment")
	after := srv.Comments(pr)
	if len(after) != 1 || after[0].ID != comments[0].ID || !strings.Contains(after[0].Body, "+  color: yellow") {
		t.Fatalf("comments after a push = %+v", after)
	}
	st := srv.Statuses
	if len(st) != 2 || st[1].SHA != head || st[1].State != "success" || st[1].Context != "drift" ||
		st[1].TargetURL != srv.URL+"/acme/gitops/actions/runs/12" || !strings.Contains(st[1].Description, "1 to modify") {
		t.Errorf("statuses = %+v", st)
	}
	for _, r := range srv.Received {
		if r.Path != "/api/v1/version" && r.Authorization != "token "+jobToken {
			t.Errorf("%s %s: Authorization %q, want the job token", r.Method, r.Path, r.Authorization)
		}
		if strings.Contains(r.Body, jobToken) {
			t.Errorf("%s %s: the token is in the body", r.Method, r.Path)
		}
	}
}
