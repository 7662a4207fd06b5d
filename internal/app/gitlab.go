package app

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/gitlab"
	"github.com/drift-gitops/drift/internal/publish"
)

// GitLab are the flags of the GitLab side: the merge request's note and
// commit status, the drift issue, and the dotenv report, each part of the context
// settable instead of GitLab CI's predefined variables.
type GitLab struct {
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

// apply adds the GitLab side to what publish is asked; one forge a run.
func (g *GitLab) apply(opts *publish.Options) error {
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

// publishOptions are the forges' flags as what to publish.
func (o *Run) publishOptions() (publish.Options, error) {
	opts := o.GitHub.Options()
	if err := o.GitLab.apply(&opts); err != nil {
		return opts, err
	}
	return opts, o.Sites.apply(&opts)
}

// preflight fails, before any work, when a forge is asked for but cannot be reached.
func (o *Run) preflight() error {
	opts, err := o.publishOptions()
	if err != nil {
		return err
	}
	return opts.Preflight(o.cfg.Getenv)
}

// gitlabShard is a GitLab CI parallel job's share, I/N from CI_NODE_INDEX of
// CI_NODE_TOTAL, when --shard is not given ("" outside one).
func (o *Run) gitlabShard() (string, error) {
	if o.given("shard") || !gitlab.InCI(o.cfg.Getenv) {
		return o.Shard, nil
	}
	c, err := gitlab.FromEnv(o.cfg.Getenv)
	if err != nil || c.NodeTotal < 2 {
		return o.Shard, err
	}
	return strconv.Itoa(c.NodeIndex) + "/" + strconv.Itoa(c.NodeTotal), nil
}

// gitlabBase is --base, else in a GitLab merge request pipeline the commit its change
// is compared with (gitlab.MergeRequestBase: in a merged results pipeline the target
// branch's commit the merge was made on, else the merge base).
func (o *Run) gitlabBase(base string) string {
	if o.given("base") || !gitlab.InCI(o.cfg.Getenv) {
		return base
	}
	return gitlab.MergeRequestBase(o.cfg.Getenv)
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
	return github.StatusCode(err) == http.StatusForbidden || gitlab.StatusCode(err) == http.StatusForbidden || siteRefused(err)
}

// forgeFlagsOfAShard are the flags that publish, which a shard must not be given.
var forgeFlagsOfAShard = append([]string{"gitlab-note", "gitlab-issue"}, siteFlags(siteFlagNames.comment, siteFlagNames.issue)...)

// checkShardFlags refuses publishing from a shard.
func (o *Run) checkShardFlags() error {
	for _, name := range forgeFlagsOfAShard {
		if o.given(name) {
			return fmt.Errorf("--%s with --shard (or a GitLab parallel job): a shard holds part of the report; publish once, from drift report merge of every shard's JSON report", name)
		}
	}
	return nil
}
