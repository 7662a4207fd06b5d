package app

import (
	"context"
	"strings"
	"testing"
)

// TestAMergedResultsPipelineIsComparedWithTheTargetBranch: a merged results pipeline
// runs on the merge commit GitLab made of the source branch onto the target branch's
// tip, so the change is previewed against that tip
// (CI_MERGE_REQUEST_TARGET_BRANCH_SHA), not the merge base, which would count what
// the target branch gained since as part of the merge request; a detached pipeline,
// where GitLab sets the target branch's SHA empty, is compared with the merge base;
// --base wins in both, and outside GitLab CI nothing is read.
func TestAMergedResultsPipelineIsComparedWithTheTargetBranch(t *testing.T) {
	t.Parallel()
	merged := map[string]string{"GITLAB_CI": "true", "CI_MERGE_REQUEST_EVENT_TYPE": "merged_result", "CI_COMMIT_SHA": "merge123",
		"CI_MERGE_REQUEST_TARGET_BRANCH_SHA": "tip456", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": "head789", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "base000"}
	detached := map[string]string{"GITLAB_CI": "true", "CI_MERGE_REQUEST_EVENT_TYPE": "detached", "CI_COMMIT_SHA": "head789",
		"CI_MERGE_REQUEST_TARGET_BRANCH_SHA": "", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": "", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "base000"}
	outside := map[string]string{"CI_MERGE_REQUEST_TARGET_BRANCH_SHA": "tip456", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "base000"}
	for _, c := range []struct {
		name  string
		env   map[string]string
		flags []string
		want  string
	}{
		{"merged results", merged, nil, "tip456"},
		{"merged results, --base", merged, []string{"base"}, "origin/main"},
		{"detached", detached, nil, "base000"},
		{"detached, --base", detached, []string{"base"}, "origin/main"},
		{"outside GitLab CI", outside, nil, ""},
	} {
		o := &Run{Given: given(c.flags...), cfg: testConfig(c.env)}
		base := ""
		if len(c.flags) > 0 {
			base = "origin/main"
		}
		if got := o.gitlabBase(base); got != c.want {
			t.Errorf("%s: base %q, want %q", c.name, got, c.want)
		}
	}
}

// TestDetectRefusesAMergeRequestsFlagsNamingGitLabsIssue: drift detect refuses the
// flags of a preview before any work, and points a GitLab user to --gitlab-issue, a
// GitHub user to --github-issue, and a user of another forge to its own.
func TestDetectRefusesAMergeRequestsFlagsNamingGitLabsIssue(t *testing.T) {
	t.Parallel()
	for flag, want := range map[string]string{
		"gitlab-note":      "--gitlab-note is for a merge request's preview (drift diff); drift detect keeps an issue (--gitlab-issue) instead",
		"gitlab-status":    "--gitlab-status is for a merge request's preview (drift diff); drift detect keeps an issue (--gitlab-issue) instead",
		"github-comment":   "--github-comment is for a pull request's preview (drift diff); drift detect keeps an issue (--github-issue) instead",
		"gitea-comment":    "--gitea-comment is for a Gitea pull request's preview (drift diff); drift detect keeps an issue (--gitea-issue) instead",
		"bitbucket-status": "--bitbucket-status is for a Bitbucket pull request's preview (drift diff); drift detect keeps an issue (--bitbucket-issue) instead",
		"azure-comment":    "--azure-comment is for an Azure DevOps pull request's preview (drift diff); drift detect keeps a work item (--azure-issue) instead",
	} {
		_, err := testConfig(nil).Detect(context.Background(), &Run{Given: given(flag)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--%s: %v", flag, err)
		}
	}
}
