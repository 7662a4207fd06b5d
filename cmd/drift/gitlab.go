package main

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/gitlab"
	"github.com/drift-gitops/drift/internal/publish"
)

// gitlabOptions are the flags of the GitLab side: the merge request's note and
// commit status, the drift issue, and the dotenv report, each part of the context
// settable instead of GitLab CI's predefined variables.
type gitlabOptions struct {
	Note    bool
	Status  bool
	Issue   bool
	Token   string
	Project string
	MR      int64
	APIURL  string
	HeadSHA string
	Dotenv  string
}

// addFlags registers the GitLab side's flags but --gitlab-issue (detect's and merge's).
func (g *gitlabOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&g.Note, "gitlab-note", false, "post the report to the merge request as one note, updated on every run, and set a commit status (context from GitLab CI's CI_* variables; the token from DRIFT_GITLAB_TOKEN or GITLAB_TOKEN)")
	f.BoolVar(&g.Status, "gitlab-status", true, "with --gitlab-note: also set a commit status named drift on the merge request's head commit")
	f.StringVar(&g.Token, "gitlab-token", "", "GitLab project access token with the api scope (default $DRIFT_GITLAB_TOKEN, else $GITLAB_TOKEN; CI_JOB_TOKEN cannot write notes)")
	f.StringVar(&g.Project, "gitlab-project", "", "project ID or path (default $CI_PROJECT_ID)")
	f.Int64Var(&g.MR, "gitlab-mr", 0, "merge request IID (default $CI_MERGE_REQUEST_IID)")
	f.StringVar(&g.APIURL, "gitlab-api-url", "", "GitLab API URL (default $CI_API_V4_URL, else https://gitlab.com/api/v4); the token is sent to its scheme, host and port only")
	f.StringVar(&g.HeadSHA, "gitlab-sha", "", "commit the status is set on (default $CI_MERGE_REQUEST_SOURCE_BRANCH_SHA, else $CI_COMMIT_SHA)")
	f.StringVar(&g.Dotenv, "gitlab-dotenv", "", "append the outputs (DRIFT_HAS_CHANGES, DRIFT_COUNTS, DRIFT_REPORT_JSON, ...) to this file, a dotenv report for later jobs")
}

// addIssueFlag registers --gitlab-issue.
func (g *gitlabOptions) addIssueFlag(f *pflag.FlagSet) {
	f.BoolVar(&g.Issue, "gitlab-issue", false, "keep one GitLab issue (label drift) for this target set: opened when drift appears, updated when it changes, closed when it is gone")
}

// apply adds the GitLab side to what publish is asked; one forge a run.
func (g *gitlabOptions) apply(opts *publish.Options) error {
	if opts.Dotenv = g.Dotenv; !g.Note && !g.Issue {
		return nil
	}
	if opts.Comment || opts.Issue {
		return errors.New("--gitlab-note and --gitlab-issue publish to GitLab, --github-comment and --github-issue to GitHub: give one forge's")
	}
	opts.Forge, opts.Comment, opts.Check, opts.Issue = publish.GitLab, g.Note, g.Status, g.Issue
	opts.GitLab = gitlab.Context{Token: g.Token, Project: g.Project, MR: g.MR, APIURL: g.APIURL, HeadSHA: g.HeadSHA}
	return nil
}

// publishOptions are the GitHub and GitLab flags as what to publish.
func (o *commonOptions) publishOptions() (publish.Options, error) {
	opts := o.github.options()
	return opts, o.gitlab.apply(&opts)
}

// preflight fails, before any work, when a forge is asked for but cannot be reached.
func (o *commonOptions) preflight() error {
	opts, err := o.publishOptions()
	if err != nil {
		return err
	}
	return opts.Preflight(o.getenv)
}

// gitlabShard is a GitLab CI parallel job's share, I/N from CI_NODE_INDEX of
// CI_NODE_TOTAL, when --shard is not given ("" outside one).
func (o *commonOptions) gitlabShard() (string, error) {
	if o.flagSet("shard") || !gitlab.InCI(o.getenv) {
		return o.Shard, nil
	}
	c, err := gitlab.FromEnv(o.getenv)
	if err != nil || c.NodeTotal < 2 {
		return o.Shard, err
	}
	return strconv.Itoa(c.NodeIndex) + "/" + strconv.Itoa(c.NodeTotal), nil
}

// gitlabBase is --base, else in a GitLab merge request pipeline the merge request's
// diff base (CI_MERGE_REQUEST_DIFF_BASE_SHA).
func (o *commonOptions) gitlabBase(base string) string {
	if o.flagSet("base") || !gitlab.InCI(o.getenv) {
		return base
	}
	return o.getenv("CI_MERGE_REQUEST_DIFF_BASE_SHA")
}

// gitlabBranches are the branches a GitLab CI job stands for: a merge request's
// target and source branches, else the branch the pipeline runs for.
func gitlabBranches(getenv func(string) string) []string {
	c, _ := gitlab.FromEnv(getenv)
	if b := c.Branches(); len(b) > 0 {
		return b
	}
	if b := getenv("CI_COMMIT_BRANCH"); b != "" {
		return []string{b}
	}
	return nil
}

// gitlabCredentials are the variables of a GitLab CI job that hold tokens.
var gitlabCredentials = append([]string{"CI_JOB_TOKEN", "CI_REGISTRY_PASSWORD", "CI_DEPENDENCY_PROXY_PASSWORD"}, gitlab.TokenVariables...)

// refused says whether a forge refused drift for lack of permission (403): a fork's
// token; the report is still written and the exit status stays the diff's.
func refused(err error) bool {
	return github.StatusCode(err) == http.StatusForbidden || gitlab.StatusCode(err) == http.StatusForbidden
}

// forgeFlagsOfAShard are the flags that publish, which a shard must not be given.
var forgeFlagsOfAShard = []string{"gitlab-note", "gitlab-issue"}

// checkShardFlags refuses publishing from a shard.
func (o *commonOptions) checkShardFlags() error {
	for _, name := range forgeFlagsOfAShard {
		if o.flagSet(name) {
			return fmt.Errorf("--%s with --shard (or a GitLab parallel job): a shard holds part of the report; publish once, from drift report merge of every shard's JSON report", name)
		}
	}
	return nil
}
