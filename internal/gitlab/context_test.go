package gitlab

import (
	"strings"
	"testing"
)

// ciEnv is what a merge request pipeline's job has.
func ciEnv() map[string]string {
	return map[string]string{
		"GITLAB_CI": "true", "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7", "CI_API_V4_URL": "https://gitlab.example/api/v4",
		"CI_COMMIT_SHA": "abc123", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
		"CI_MERGE_REQUEST_DIFF_BASE_SHA": "def456", "CI_PIPELINE_ID": "900", "CI_PIPELINE_URL": "https://gitlab.example/acme/gitops/-/pipelines/900",
		"CI_JOB_URL": "https://gitlab.example/acme/gitops/-/jobs/5", "CI_JOB_TOKEN": "job-token", "DRIFT_GITLAB_TOKEN": "glpat-x",
	}
}

// TestTheJobsEnvironmentIsTheContext: every predefined variable drift uses lands in
// its field; DRIFT_GITLAB_TOKEN wins over GITLAB_TOKEN. In a merged results pipeline
// the status still goes on the commit the pipeline runs, the merge commit, which is
// the only commit GitLab adds to that pipeline, and the change is compared with the
// target branch's commit the merge was made on.
func TestTheJobsEnvironmentIsTheContext(t *testing.T) {
	t.Parallel()
	env := ciEnv()
	env["GITLAB_TOKEN"] = "glpat-other"
	env["CI_NODE_INDEX"], env["CI_NODE_TOTAL"] = "2", "3"
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := Context{Token: "glpat-x", Project: "42", MR: 7, APIURL: "https://gitlab.example/api/v4", HeadSHA: "abc123", SourceBranch: "feature",
		TargetBranch: "main", BaseSHA: "def456", PipelineID: 900, PipelineURL: "https://gitlab.example/acme/gitops/-/pipelines/900",
		JobURL: "https://gitlab.example/acme/gitops/-/jobs/5", NodeIndex: 2, NodeTotal: 3}
	if c != want {
		t.Errorf("context = %+v\nwant      %+v", c, want)
	}
	// A merged results pipeline: CI_COMMIT_SHA is the merge commit; GitLab sets the
	// source branch's head and the target branch's commit beside it.
	env["CI_MERGE_REQUEST_EVENT_TYPE"], env["CI_COMMIT_SHA"] = "merged_result", "merge789"
	env["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"], env["CI_MERGE_REQUEST_TARGET_BRANCH_SHA"] = "feed42", "tip999"
	merged, err := FromEnv(func(k string) string { return env[k] })
	if err != nil || merged.HeadSHA != "merge789" || merged.PipelineID != 900 || merged.BaseSHA != "tip999" {
		t.Errorf("merged results pipeline: status on %q in pipeline %d, base %q (%v); want the merge commit in the running pipeline, against the target branch's commit",
			merged.HeadSHA, merged.PipelineID, merged.BaseSHA, err)
	}
	// A detached merge request pipeline: GitLab sets the target branch's SHA empty.
	env["CI_MERGE_REQUEST_EVENT_TYPE"], env["CI_MERGE_REQUEST_TARGET_BRANCH_SHA"] = "detached", ""
	if detached, _ := FromEnv(func(k string) string { return env[k] }); detached.BaseSHA != "def456" {
		t.Errorf("detached pipeline: base %q, want the merge base", detached.BaseSHA)
	}
	if b := c.Branches(); strings.Join(b, ",") != "main,feature" {
		t.Errorf("branches = %v", b)
	}
	if err := c.Check(true); err != nil {
		t.Error(err)
	}
}

// TestTheJobTokenAloneIsRefusedWithWhatToDo: CI_JOB_TOKEN cannot write notes; a job
// with nothing else is told so, and what to create, before any request.
func TestTheJobTokenAloneIsRefusedWithWhatToDo(t *testing.T) {
	t.Parallel()
	env := ciEnv()
	delete(env, "DRIFT_GITLAB_TOKEN")
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	err = c.Check(true)
	if err == nil || !strings.Contains(err.Error(), "only CI_JOB_TOKEN, which GitLab does not let write merge request notes") ||
		!strings.Contains(err.Error(), "project access token") || strings.Contains(err.Error(), "job-token") {
		t.Errorf("Check = %v", err)
	}
	delete(env, "CI_JOB_TOKEN")
	c, _ = FromEnv(func(k string) string { return env[k] })
	if err := c.Check(true); err == nil || !strings.Contains(err.Error(), "missing a token (DRIFT_GITLAB_TOKEN or GITLAB_TOKEN, or --gitlab-token)") {
		t.Errorf("no token: %v", err)
	}
}

// TestMalformedVariablesAreNamed: a variable that is set but not what GitLab sets
// is an error naming it; an issue needs no merge request; outside a parallel job
// there is no node.
func TestMalformedVariablesAreNamed(t *testing.T) {
	t.Parallel()
	for k, v := range map[string]string{"CI_MERGE_REQUEST_IID": "seven", "CI_PIPELINE_ID": "-1", "CI_NODE_TOTAL": "3"} {
		env := ciEnv()
		env[k] = v
		if k == "CI_NODE_TOTAL" {
			env["CI_NODE_INDEX"] = "4"
		}
		if _, err := FromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	env := ciEnv()
	delete(env, "CI_MERGE_REQUEST_IID")
	env["CI_NODE_TOTAL"] = "1"
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil || c.Check(false) != nil || c.Check(true) == nil || c.NodeTotal != 0 {
		t.Errorf("%v %+v", err, c)
	}
	if c, _ := FromEnv(func(string) string { return "" }); c.APIURL != DefaultAPIURL {
		t.Errorf("default API URL = %q", c.APIURL)
	}
}
