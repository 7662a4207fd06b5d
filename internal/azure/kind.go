package azure

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// TokenVariables are the variables drift takes a token from, in order: a personal
// access token kept as a secret variable, then the job's System.AccessToken, which
// a step sees only when it maps it (env: SYSTEM_ACCESSTOKEN: $(System.AccessToken)).
var TokenVariables = []string{"DRIFT_AZURE_TOKEN", "SYSTEM_ACCESSTOKEN"}

// Kind is Azure DevOps (Services, and Server 2020 and later) as internal/publish
// knows it.
var Kind = &forge.Kind{
	Name:           "Azure DevOps",
	Flag:           "azure",
	Note:           "comment",
	Review:         "pull request",
	Tracked:        "work item",
	MaxNoteBytes:   MaxNoteBytes,
	TokenVariables: TokenVariables,
	// AZURE_DEVOPS_EXT_PAT is the token the az devops CLI reads, which pipelines
	// commonly set from System.AccessToken.
	Secrets:    []string{"DRIFT_AZURE_TOKEN", "SYSTEM_ACCESSTOKEN", "AZURE_DEVOPS_EXT_PAT"},
	InCI:       InCI,
	FromEnv:    FromEnv,
	Open:       func(c forge.CI, base http.RoundTripper) (forge.Site, error) { return open(c, base, forge.Sleep) },
	Flavour:    Flavour,
	StatusCode: StatusCode,
	TooLong:    TooLong,
	Docs:       "docs/azure-devops.md",
}

var _ forge.Site = (*Site)(nil)

// Open is Kind.Open, for callers that want the Site's own type.
func Open(c forge.CI, base http.RoundTripper) (*Site, error) { return open(c, base, forge.Sleep) }

// InCI says whether getenv is an Azure Pipelines job's: the agent sets TF_BUILD to
// True in every step.
func InCI(getenv func(string) string) bool { return strings.EqualFold(getenv("TF_BUILD"), "True") }

// FromEnv reads an Azure Pipelines job's predefined variables (the agent exports
// each as an environment variable, its name upper-cased, dots made underscores) and
// the token (TokenVariables). A variable set but malformed is an error naming it.
//
// In a pull request build (Azure Repos' build validation) the agent checks out
// refs/pull/N/merge, the merge commit Azure Repos made of the source branch onto
// the target branch: BUILD_SOURCEVERSION is that commit, and its first parent is
// the target branch's head, the base the change is compared with. No variable
// names that parent: the template passes it as --base (git rev-parse HEAD^1), and
// BaseSHA stays empty.
func FromEnv(getenv func(string) string) (forge.CI, error) {
	c := forge.CI{HeadSHA: getenv("BUILD_SOURCEVERSION")}
	for _, name := range TokenVariables {
		if c.Token = getenv(name); c.Token != "" {
			break
		}
	}
	if p := getenv("BUILD_REPOSITORY_PROVIDER"); p != "" && p != "TfsGit" {
		return c, fmt.Errorf("BUILD_REPOSITORY_PROVIDER=%q: the pipeline builds a repository outside Azure Repos; drift posts to Azure DevOps only for an Azure Repos Git repository (TfsGit): for a GitHub repository use --github-comment with a GitHub token (docs/azure-devops.md)", p)
	}
	c.APIURL = getenv("SYSTEM_COLLECTIONURI")
	if c.APIURL == "" {
		c.APIURL = getenv("SYSTEM_TEAMFOUNDATIONCOLLECTIONURI")
	}
	project, repo := getenv("SYSTEM_TEAMPROJECT"), getenv("BUILD_REPOSITORY_NAME")
	if project != "" && repo != "" {
		c.Repository = project + "/" + repo
	}
	if s := getenv("SYSTEM_PULLREQUEST_PULLREQUESTID"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("SYSTEM_PULLREQUEST_PULLREQUESTID=%q is not a positive number", s)
		}
		c.PR = n
		for _, v := range []string{"SYSTEM_PULLREQUEST_TARGETBRANCH", "SYSTEM_PULLREQUEST_SOURCEBRANCH"} {
			if b := strings.TrimPrefix(getenv(v), "refs/heads/"); b != "" {
				c.Branches = append(c.Branches, b)
			}
		}
	} else if b := getenv("BUILD_SOURCEBRANCH"); strings.HasPrefix(b, "refs/heads/") {
		c.Branches = []string{strings.TrimPrefix(b, "refs/heads/")}
	}
	if s := getenv("BUILD_BUILDID"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("BUILD_BUILDID=%q is not a positive number", s)
		}
		if c.APIURL != "" && project != "" {
			c.RunURL = strings.TrimRight(c.APIURL, "/") + "/" + url.PathEscape(project) + "/_build/results?buildId=" + s
		}
	}
	return c, nil
}
