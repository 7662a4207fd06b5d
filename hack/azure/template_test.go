// Package azure runs the Azure Pipelines step template's scripts
// (templates/azure-pipelines/drift.yml) as the agent would, against the Azure DevOps
// stand-in and a local release server holding a drift built from this tree.
package azure

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/drift-gitops/drift/internal/azure"
	"github.com/drift-gitops/drift/internal/azure/azuretest"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/releasetest"
	"github.com/drift-gitops/drift/internal/testenv"
)

const (
	// jobToken is System.AccessToken as the agent hands it: a JWT, sent as Bearer.
	jobToken = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJuYW1laWQiOiJidWlsZCJ9.c2lnbmF0dXJl"
	version  = "v9.9.9"
)

// step is a bash step of the template.
type step struct {
	Bash        string            `yaml:"bash"`
	Name        string            `yaml:"name"`
	DisplayName string            `yaml:"displayName"`
	Env         map[string]string `yaml:"env"`
	Target      map[string]any    `yaml:"target"`
}

// template is the template's parameters (their defaults) and its bash steps.
type template struct {
	params map[string]any
	steps  []step
}

func readTemplate(t *testing.T) template {
	t.Helper()
	var doc struct {
		Parameters []struct {
			Name    string `yaml:"name"`
			Default any    `yaml:"default"`
		} `yaml:"parameters"`
		Steps []yaml.Node `yaml:"steps"`
	}
	if err := yaml.Unmarshal(must(os.ReadFile("../../templates/azure-pipelines/drift.yml")), &doc); err != nil {
		t.Fatal(err)
	}
	tp := template{params: map[string]any{}}
	for _, p := range doc.Parameters {
		tp.params[p.Name] = p.Default
	}
	for _, n := range doc.Steps {
		var s step
		if err := n.Decode(&s); err == nil && s.Bash != "" {
			tp.steps = append(tp.steps, s)
		}
	}
	if len(tp.steps) != 2 || tp.steps[1].Name != "drift" {
		t.Fatalf("want the drift step and the outputs step named drift, got %+v", tp.steps)
	}
	return tp
}

var (
	expression = regexp.MustCompile(`\$\{\{\s*parameters\.(\w+)\s*\}\}`)
	macro      = regexp.MustCompile(`\$\(([\w.]+)\)`)
)

// run runs step s's script as the agent runs a bash step (bash --noprofile --norc
// on the script, in the checkout), its env built as the agent builds it:
// template expressions from params, $(macros) from vars, then the predefined
// variables as environment variables (upper case, dots made underscores).
func (tp template) run(t *testing.T, s step, dir string, params map[string]string, vars map[string]string) (int, string) {
	t.Helper()
	expand := func(v string) string {
		v = expression.ReplaceAllStringFunc(v, func(m string) string {
			name := expression.FindStringSubmatch(m)[1]
			if p, ok := params[name]; ok {
				return p
			}
			def, ok := tp.params[name]
			if !ok {
				t.Fatalf("undeclared parameter %s", name)
			}
			if b, ok := def.(bool); ok {
				return map[bool]string{true: "True", false: "False"}[b]
			}
			return fmt.Sprint(def)
		})
		return macro.ReplaceAllStringFunc(v, func(m string) string {
			if val, ok := vars[macro.FindStringSubmatch(m)[1]]; ok {
				return val
			}
			return m // the agent leaves an unknown macro as it is
		})
	}
	env := os.Environ()
	for k, v := range vars {
		if k != "System.AccessToken" { // a secret: only where a step maps it
			env = append(env, strings.ToUpper(strings.ReplaceAll(k, ".", "_"))+"="+v)
		}
	}
	for k, v := range s.Env {
		env = append(env, k+"="+expand(v))
	}
	script := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(script, []byte(expand(s.Bash)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", script)
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.CombinedOutput()
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

// mergeCommit makes the commit Azure Repos builds for a pull request: the source
// branch's head merged onto the target's (parents base, head), checked out detached.
func mergeCommit(t *testing.T, dir, base, head string) string {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	merge := git("commit-tree", head+"^{tree}", "-p", base, "-p", head, "-m", "Merge pull request 7")
	git("checkout", "-q", "--detach", merge)
	return merge
}

// TestTheTemplatePreviewsAPullRequest runs the template's steps as a pull request
// build would: install the release (checksum verified), preview the merge commit
// against its first parent on an ephemeral API server, post the comment thread and
// the pull request status to the stand-in with System.AccessToken as the step maps
// it, and set the output variables; run again after a push, it updates the same
// thread. The log holds no token, and no output value the agent would misread.
func TestTheTemplatePreviewsAPullRequest(t *testing.T) {
	testenv.Require(t)
	tp := readTemplate(t)
	rel := releaseServer(t)
	srv := azuretest.New(jobToken)
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
	merge := mergeCommit(t, repo.Dir, base, head)
	tmp := t.TempDir()
	vars := map[string]string{
		"TF_BUILD": "True", "System.CollectionUri": srv.APIURL(), "System.TeamProject": "shop", "Build.Repository.Name": "gitops",
		"Build.Repository.Provider": "TfsGit", "System.PullRequest.PullRequestId": "7", "System.PullRequest.TargetBranch": "refs/heads/main",
		"System.PullRequest.SourceBranch": "refs/heads/feature", "Build.SourceVersion": merge, "Build.SourceBranch": "refs/pull/7/merge",
		"Build.BuildId": "12", "Build.Reason": "PullRequest", "System.JobName": "diff", "System.JobAttempt": "1",
		"Agent.TempDirectory": filepath.Join(tmp, "_temp"), "Build.ArtifactStagingDirectory": filepath.Join(tmp, "a"),
		"Pipeline.Workspace": filepath.Join(tmp, "w"), "System.AccessToken": jobToken,
		"DRIFT_RELEASES_URL": rel.URL + "/download", "KUBECONFIG": "/dev/null", "XDG_CACHE_HOME": filepath.Join(tmp, "cache"),
	}
	for _, d := range []string{"_temp", "a", "w"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	params := map[string]string{"version": version, "cluster": "ephemeral", "installUrl": rel.URL + "/drift-gitops/drift/main/install.sh"}

	for run, color := range []string{"", "yellow"} {
		if color != "" { // a push: a new merge commit
			head, err = repo.CommitFiles(map[string]string{"apps/web.yaml": cm("web", color)}, "a push")
			if err != nil {
				t.Fatal(err)
			}
			vars["Build.SourceVersion"] = mergeCommit(t, repo.Dir, base, head)
			os.RemoveAll(filepath.Join(tmp, "a", "drift"))
		}
		code, log := tp.run(t, tp.steps[0], repo.Dir, params, vars)
		if code != 0 {
			t.Fatalf("run %d: the drift step failed (%d):\n%s", run, code, log)
		}
		if strings.Contains(log, jobToken) {
			t.Errorf("run %d: the token is in the log", run)
		}
		threads := srv.Threads(7)
		if len(threads) != 1 || !strings.Contains(threads[0].Comments[0].Content, "### drift: 1 to add, 1 to modify") ||
			!strings.Contains(threads[0].Comments[0].Content, "color: "+map[int]string{0: "green", 1: "yellow"}[run]) || threads[0].Status != "closed" {
			t.Fatalf("run %d: threads = %+v\n%s", run, threads, log)
		}
		st := srv.Statuses
		if len(st) != run+1 || st[run]["pr"] != 7 || st[run]["genre"] != "drift" || st[run]["state"] != "succeeded" ||
			st[run]["targetUrl"] != strings.TrimRight(srv.APIURL(), "/")+"/shop/_build/results?buildId=12" {
			t.Errorf("run %d: statuses = %+v", run, st)
		}
		code, out := tp.run(t, tp.steps[1], repo.Dir, params, vars)
		if code != 0 || !strings.Contains(out, "##vso[task.setvariable variable=DRIFT_HAS_CHANGES;isOutput=true]true\n") ||
			!strings.Contains(out, "##vso[task.setvariable variable=DRIFT_REPORT_JSON;isOutput=true]"+filepath.Join(tmp, "a", "drift", "report.json")+"\n") {
			t.Errorf("run %d: outputs (%d):\n%s", run, code, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if _, value, ok := strings.Cut(line, "isOutput=true]"); ok && azure.AgentWouldRead(value) {
				t.Errorf("an output value holds a logging command: %q", line)
			}
		}
		if _, err := os.Stat(filepath.Join(tmp, "a", "drift", "report.html")); err != nil {
			t.Errorf("run %d: the artifact's report: %v", run, err)
		}
	}
	for _, r := range srv.Received {
		if r.Authorization != "Bearer "+jobToken {
			t.Errorf("%s %s carried %q", r.Method, r.Path, r.Authorization)
		}
	}
}

// TestOutputsTakeOnlyDriftsNamesAndValues: a drift.env line that is not drift's, or
// a value with characters drift does not write there (a "]" ending the command, a
// ";" adding a property, "##vso["), sets no variable.
func TestOutputsTakeOnlyDriftsNamesAndValues(t *testing.T) {
	tp := readTemplate(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "a", "drift")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := "DRIFT_HAS_CHANGES=true\nPATH=/tmp/evil\nDRIFT_COUNTS=1 to add]##vso[task.setvariable variable=PATH]/x\nDRIFT_ADD=1;issecret=true\nDRIFT_RISKY=0\n"
	if err := os.WriteFile(filepath.Join(dir, "drift.env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := tp.run(t, tp.steps[1], tmp, nil, map[string]string{"Build.ArtifactStagingDirectory": filepath.Join(tmp, "a")})
	var set []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "##vso[") {
			set = append(set, line)
		}
	}
	if code != 0 || len(set) != 2 || set[0] != "##vso[task.setvariable variable=DRIFT_HAS_CHANGES;isOutput=true]true" || set[1] != "##vso[task.setvariable variable=DRIFT_RISKY;isOutput=true]0" {
		t.Errorf("(%d) set %q:\n%s", code, set, out)
	}
}
