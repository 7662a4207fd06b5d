package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/drift-gitops/drift/internal/github/githubtest"
)

// TestActionRunsItsSteps runs the composite Action's preview step, as action.yml
// declares it, with a fake Actions environment: the GitHub stand-in server, the test
// API server's kubeconfig, and this test binary as drift.
func TestActionRunsItsSteps(t *testing.T) {
	var action struct {
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]any `yaml:"outputs"`
		Runs    struct {
			Steps []struct {
				ID  string            `yaml:"id"`
				Run string            `yaml:"run"`
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	var stepEnv map[string]string
	var run string
	for _, s := range action.Runs.Steps {
		if s.ID == "diff" {
			stepEnv, run = s.Env, s.Run
		}
	}
	if run != `bash "$GITHUB_ACTION_PATH/hack/action/run.sh"` {
		t.Fatalf("the preview step runs %q", run)
	}
	// Every DRIFT_INPUT_* variable comes from the input of that name.
	for k, v := range stepEnv {
		if name, ok := strings.CutPrefix(k, "DRIFT_INPUT_"); ok {
			input := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
			if _, declared := action.Inputs[input]; !declared || v != "${{ inputs."+input+" }}" {
				t.Errorf("%s=%s does not come from a declared input %s", k, v, input)
			}
		}
	}
	for _, out := range []string{"has-changes", "counts", "report-json", "report-html", "risky", "policy-failed"} {
		if _, ok := action.Outputs[out]; !ok {
			t.Errorf("output %s is not declared", out)
		}
	}

	srv := githubtest.New(ghToken)
	defer srv.Close()
	actionsEnv(t, srv, 21)
	ns := namespace(t)
	a := sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: NS}\n", ns)
	apply(t, "kubectl", a)
	r := repo(t, map[string]string{"cm.yaml": a})
	base, _ := r.Git("rev-parse", "HEAD")
	if _, err := r.CommitFiles(map[string]string{"cm2.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: NS}\n", ns)}, "add b"); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp, cache := t.TempDir(), t.TempDir()
	wrapper := filepath.Join(t.TempDir(), "drift")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nDRIFT_TEST_RUN_MAIN=1 exec "+self+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	runStep := func(failOnChanges string, inputs ...string) (int, string, string) {
		output := filepath.Join(t.TempDir(), "output")
		cmd := exec.Command("bash", filepath.Join(mustAbs(t, "../.."), "hack", "action", "run.sh"))
		cmd.Dir = r.Dir
		for _, in := range inputs {
			if dir, ok := strings.CutPrefix(in, "DRIFT_TEST_DIR="); ok {
				cmd.Dir = dir
			}
		}
		cmd.Env = append(append(os.Environ(),
			"DRIFT_BIN="+wrapper, "RUNNER_TEMP="+tmp, "DRIFT_CACHE_DIR="+cache, "DRIFT_CACHE_SETTLE=0s", "GITHUB_OUTPUT="+output, "KUBECONFIG="+env.Kubeconfig,
			"DRIFT_INPUT_BASE_REF="+strings.TrimSpace(base), "DRIFT_INPUT_FAIL_ON_CHANGES="+failOnChanges, "DRIFT_INPUT_TARGETS=", "DRIFT_INPUT_ARGS=--show-unchanged"),
			inputs...)
		out, _ := cmd.CombinedOutput()
		outputs, _ := os.ReadFile(output)
		return cmd.ProcessState.ExitCode(), string(out), string(outputs)
	}
	code, out, outputs := runStep("false")
	// Every output the binary writes is declared.
	for _, line := range strings.Split(strings.TrimSpace(outputs), "\n") {
		name, _, _ := strings.Cut(line, "=")
		if _, ok := action.Outputs[name]; !ok && name != "installed" {
			t.Errorf("the step writes output %s, which action.yml does not declare", name)
		}
	}
	if code != 0 || !strings.Contains(outputs, "has-changes=true") || !strings.Contains(outputs, "counts=1 to add, 0 to modify, 0 to delete, 1 unchanged, 0 errors") {
		t.Fatalf("exit %d\n%s\noutputs:\n%s", code, out, outputs)
	}
	if c := srv.Comments(21); len(c) != 1 || !strings.Contains(c[0].Body, "### drift: 1 to add") {
		t.Fatalf("comments = %+v", c)
	}
	reportJSON := filepath.Join(tmp, "drift", "report.json")
	if !strings.Contains(outputs, "report-json="+reportJSON) {
		t.Errorf("outputs: %s", outputs)
	}
	if _, err := os.Stat(reportJSON); err != nil {
		t.Error(err)
	}
	if code, out, _ := runStep("true"); code != 1 {
		t.Errorf("fail-on-changes: exit %d\n%s", code, out)
	}
	// The dry-run cache (restored by actions/cache): answered from it on a repeat
	// run; input cache false sends every dry run.
	if _, out, _ := runStep("false"); !strings.Contains(out, "drift: dry-run cache: 2 answered from the cache, 0 sent") {
		t.Errorf("a repeat run did not answer from the cache:\n%s", out)
	}
	if _, out, _ := runStep("false", "DRIFT_INPUT_CACHE=false"); strings.Contains(out, "dry-run cache:") {
		t.Errorf("cache false used the cache:\n%s", out)
	}
	reportHTML := filepath.Join(tmp, "drift", "report.html")
	if page, err := os.ReadFile(reportHTML); err != nil || !strings.Contains(outputs, "report-html="+reportHTML) || !strings.Contains(string(page), "<h1>drift: 1 to add</h1>") {
		t.Errorf("no HTML report (%v); outputs:\n%s", err, outputs)
	}

	// A matrix of two shards, each writing its share's report and publishing
	// nothing, then a merge step commenting once with the whole run's report.
	shards := t.TempDir()
	for _, i := range []string{"1", "2"} {
		jobTemp := t.TempDir()
		code, out, outputs := runStep("false", "RUNNER_TEMP="+jobTemp, "DRIFT_INPUT_SHARD="+i+"/2")
		if code != 0 || !strings.Contains(outputs, "report-json=") {
			t.Fatalf("shard %s/2: exit %d\n%s\noutputs:\n%s", i, code, out, outputs)
		}
		if err := os.Rename(filepath.Join(jobTemp, "drift", "report.json"), filepath.Join(shards, "shard-"+i+".json")); err != nil {
			t.Fatal(err)
		}
	}
	if c := srv.Comments(21); len(c) != 1 || strings.Contains(c[0].Body, "shard") {
		t.Fatalf("a shard published: comments = %+v", c)
	}
	before := srv.Comments(21)[0].Body
	code, out, outputs = runStep("false", "DRIFT_INPUT_MODE=merge", "DRIFT_INPUT_REPORTS="+filepath.Join(shards, "shard-*.json")+"\n")
	if code != 0 || !strings.Contains(outputs, "counts=1 to add, 0 to modify, 0 to delete, 1 unchanged, 0 errors") {
		t.Fatalf("merge: exit %d\n%s\noutputs:\n%s", code, out, outputs)
	}
	if c := srv.Comments(21); len(c) != 1 || c[0].Body != before {
		t.Errorf("the merged comment differs from the single run's:\n%s\n---\n%s", before, c[0].Body)
	}
	code, out, _ = runStep("false", "DRIFT_INPUT_MODE=merge", "DRIFT_INPUT_REPORTS=")
	if code != 2 || !strings.Contains(out, "::error::mode: merge needs the reports input") {
		t.Errorf("merge without reports: exit %d\n%s", code, out)
	}
	// A checkout of one commit (actions/checkout's default): the step fetches the base.
	shallow := filepath.Join(t.TempDir(), "shallow")
	if out, err := exec.Command("git", "clone", "-q", "--depth=1", "file://"+r.Dir, shallow).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if exec.Command("git", "-C", shallow, "cat-file", "-e", strings.TrimSpace(base)+"^{commit}").Run() == nil {
		t.Fatal("the shallow clone holds the base already")
	}
	code, out, outputs = runStep("false", "DRIFT_TEST_DIR="+shallow, "DRIFT_INPUT_SHARD=1/1")
	if code != 0 || !strings.Contains(out, "drift: fetching the base "+strings.TrimSpace(base)) || !strings.Contains(outputs, "counts=1 to add, 0 to modify, 0 to delete, 1 unchanged, 0 errors") {
		t.Errorf("shallow checkout: exit %d\n%s\n%s", code, out, outputs)
	}
	// A base that would read as an option of git fetch is refused before git runs.
	if code, out, _ := runStep("false", "DRIFT_INPUT_BASE_REF=--upload-pack=false"); code != 2 || !strings.Contains(out, "::error::base-ref --upload-pack=false is not a commit or a ref") {
		t.Errorf("an option as the base: exit %d\n%s", code, out)
	}
	// A policy the report fails fails the step, whatever fail-on-changes says.
	if code, out, outputs := runStep("false", "DRIFT_INPUT_FAIL_ON=change, delete"); code != 3 || !strings.Contains(out, "::error title=drift::the change fails the policy") || !strings.Contains(outputs, "policy-failed=true") {
		t.Errorf("fail-on change: exit %d\n%s\n%s", code, out, outputs)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestActionDetectRefusesTheClusterInput: cluster (ephemeral, or a kubeconfig cluster)
// is diff's; a detect step given one stops with an annotation before running drift.
func TestActionDetectRefusesTheClusterInput(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("bash", filepath.Join(mustAbs(t, "../.."), "hack", "action", "run.sh"))
	cmd.Env = append(os.Environ(), "DRIFT_BIN=/nonexistent/drift", "DRIFT_INPUT_MODE=detect", "DRIFT_INPUT_CLUSTER=ephemeral",
		"RUNNER_TEMP="+t.TempDir(), "GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "output"))
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "::error::the cluster input is for mode: diff") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
