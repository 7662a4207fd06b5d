package gitlab

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultAPIURL is GitLab.com's API.
const DefaultAPIURL = "https://gitlab.com/api/v4"

// TokenVariables are the variables drift takes a token from, in order: a project or
// group access token the project stores as a masked CI/CD variable.
var TokenVariables = []string{"DRIFT_GITLAB_TOKEN", "GITLAB_TOKEN"}

// Context is where a report goes, as a GitLab CI job's environment describes it;
// every field can be set by a flag instead.
type Context struct {
	Token string
	// JobTokenOnly says that the environment has no token but CI_JOB_TOKEN, which
	// GitLab does not let write notes, statuses or issues.
	JobTokenOnly bool
	// Project is the project's ID (CI_PROJECT_ID) or its path (group/name).
	Project string
	// MR is the merge request's IID (CI_MERGE_REQUEST_IID).
	MR     int64
	APIURL string
	// HeadSHA is the commit the pipeline runs (CI_COMMIT_SHA), which the status is set
	// on: in a merged results pipeline, the merge commit GitLab made.
	HeadSHA string
	// SourceBranch and TargetBranch are the merge request's branches; BaseSHA the
	// commit its change is compared with (MergeRequestBase).
	SourceBranch, TargetBranch, BaseSHA string
	// PipelineID is the running pipeline (CI_PIPELINE_ID), which runs HeadSHA: GitLab
	// takes a status into a pipeline only for the pipeline's own commit.
	PipelineID int64
	// PipelineURL and JobURL are the running pipeline's and job's pages.
	PipelineURL, JobURL string
	// NodeIndex and NodeTotal are a parallel job's (CI_NODE_INDEX of CI_NODE_TOTAL).
	NodeIndex, NodeTotal int
}

// InCI says whether getenv is a GitLab CI job's environment.
func InCI(getenv func(string) string) bool { return getenv("GITLAB_CI") == "true" }

// FromEnv reads a GitLab CI job's predefined variables and the token (TokenVariables).
// A variable that is set but malformed is an error naming it.
func FromEnv(getenv func(string) string) (Context, error) {
	c := Context{
		Project:      getenv("CI_PROJECT_ID"),
		APIURL:       getenv("CI_API_V4_URL"),
		HeadSHA:      getenv("CI_COMMIT_SHA"),
		SourceBranch: getenv("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"),
		TargetBranch: getenv("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
		BaseSHA:      MergeRequestBase(getenv),
		PipelineURL:  getenv("CI_PIPELINE_URL"),
		JobURL:       getenv("CI_JOB_URL"),
	}
	for _, name := range TokenVariables {
		if c.Token = getenv(name); c.Token != "" {
			break
		}
	}
	c.JobTokenOnly = c.Token == "" && getenv("CI_JOB_TOKEN") != ""
	for _, v := range []struct {
		name string
		dst  *int64
	}{{"CI_MERGE_REQUEST_IID", &c.MR}, {"CI_PIPELINE_ID", &c.PipelineID}} {
		if s := getenv(v.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("%s=%q is not a positive number", v.name, s)
			}
			*v.dst = n
		}
	}
	if idx, total := getenv("CI_NODE_INDEX"), getenv("CI_NODE_TOTAL"); total != "" && total != "1" {
		i, ierr := strconv.Atoi(idx)
		n, nerr := strconv.Atoi(total)
		if ierr != nil || nerr != nil || n < 1 || i < 1 || i > n {
			return c, fmt.Errorf("CI_NODE_INDEX=%q of CI_NODE_TOTAL=%q is not a parallel job's index (1 to the total)", idx, total)
		}
		c.NodeIndex, c.NodeTotal = i, n
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	return c, nil
}

// MergeRequestBase is the commit a merge request pipeline's change is compared with
// ("" outside one). In a merged results pipeline (and a merge train's) the pipeline
// runs on the merge commit GitLab made of the source branch onto the target branch,
// and CI_MERGE_REQUEST_TARGET_BRANCH_SHA is that commit's first parent: compared with
// it, the preview is the merge request's change alone, where the merge base
// (CI_MERGE_REQUEST_DIFF_BASE_SHA) would add what the target branch gained since. GitLab
// sets CI_MERGE_REQUEST_TARGET_BRANCH_SHA empty in other merge request pipelines,
// whose commit is the source branch's head.
func MergeRequestBase(getenv func(string) string) string {
	if sha := getenv("CI_MERGE_REQUEST_TARGET_BRANCH_SHA"); sha != "" {
		return sha
	}
	return getenv("CI_MERGE_REQUEST_DIFF_BASE_SHA")
}

// Check says what is missing to post to a merge request (mr) or to the project's
// issues (!mr).
func (c Context) Check(mr bool) error {
	var missing []string
	if c.Token == "" {
		if c.JobTokenOnly {
			return fmt.Errorf("cannot post to GitLab: the job has only CI_JOB_TOKEN, which GitLab does not let write merge request notes, commit statuses or issues; " +
				"create a project access token (role Developer, scope api), store it as a masked, protected-if-you-can CI/CD variable DRIFT_GITLAB_TOKEN, " +
				"or pass --gitlab-token (docs/gitlab.md)")
		}
		missing = append(missing, "a token ("+strings.Join(TokenVariables, " or ")+", or --gitlab-token)")
	}
	if c.Project == "" {
		missing = append(missing, "the project (CI_PROJECT_ID or --gitlab-project)")
	}
	if mr && c.MR <= 0 {
		missing = append(missing, "the merge request IID (CI_MERGE_REQUEST_IID in a merge request pipeline, or --gitlab-mr)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("cannot post to GitLab: missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// Branches are the merge request's target and source branches, those it stands for.
func (c Context) Branches() []string {
	var out []string
	for _, b := range []string{c.TargetBranch, c.SourceBranch} {
		if b != "" {
			out = append(out, b)
		}
	}
	return out
}
