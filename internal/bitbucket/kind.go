package bitbucket

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// DefaultAPIURL is Bitbucket Cloud's API.
const DefaultAPIURL = "https://api.bitbucket.org/2.0"

// MaxNoteBytes keeps a comment under Bitbucket Data Center's limit, the smaller of the
// two: Data Center refuses a comment of 32,768 characters or more (400, "Please enter
// a non-empty value less than 32768 characters"), counting UTF-16 units, of which a
// body never has more than it has bytes. Bitbucket Cloud documents no limit and keeps
// longer comments. The room left is for the marker lines, which each dialect writes
// one byte longer (hiddenLine).
const MaxNoteBytes = 32767 - 7

// TokenVariables are the variables a token is read from, in order: a repository,
// project or workspace access token (Cloud) or an HTTP access token (Data Center),
// stored as a secured repository or workspace variable.
var TokenVariables = []string{"DRIFT_BITBUCKET_TOKEN", "BITBUCKET_TOKEN"}

// UsernameVariable names the account a token is sent with in HTTP Basic (an Atlassian
// API token or app password with its account's email or username; a Data Center
// user's password or token); unset, the token is a bearer token.
const UsernameVariable = "DRIFT_BITBUCKET_USERNAME"

// AuthorVariable names drift's own user where the API cannot say: Bitbucket Cloud
// refuses GET /2.0/user to every access token, so the access token's user's UUID
// ({...}) is given here.
const AuthorVariable = "DRIFT_BITBUCKET_AUTHOR"

// Secrets are the Pipelines variables that hold a credential: drift's token
// variables, the step's OpenID Connect token, and the names other tools document
// for an app password or API token.
var Secrets = []string{"DRIFT_BITBUCKET_TOKEN", "BITBUCKET_TOKEN", "BITBUCKET_STEP_OIDC_TOKEN", "BITBUCKET_APP_PASSWORD", "BITBUCKET_API_TOKEN", "BITBUCKET_ACCESS_TOKEN"}

// Kind is Bitbucket (Cloud and Data Center) as internal/publish registers it.
var Kind = &forge.Kind{
	Name: "Bitbucket", Flag: "bitbucket", Note: "comment", Review: "pull request", Tracked: "issue",
	MaxNoteBytes: MaxNoteBytes, TokenVariables: TokenVariables, Secrets: Secrets,
	InCI: InCI, FromEnv: FromEnv, Open: Open, Flavour: Flavour, StatusCode: StatusCode, TooLong: TooLong,
	Docs: "docs/bitbucket.md",
}

// InCI says whether getenv is a Bitbucket Pipelines step: Pipelines sets CI=true and
// gives every step its build number and pipeline UUID.
func InCI(getenv func(string) string) bool {
	return getenv("CI") == "true" && getenv("BITBUCKET_BUILD_NUMBER") != "" && getenv("BITBUCKET_PIPELINE_UUID") != ""
}

// FromEnv reads a Pipelines step's default variables, the token (TokenVariables, sent
// in HTTP Basic with DRIFT_BITBUCKET_USERNAME when that is set) and drift's own user
// (DRIFT_BITBUCKET_AUTHOR). A pull-requests pipeline checks out the source branch
// with the destination branch merged into it, and no variable names the destination's
// commit: BaseSHA stays empty and the step passes --base (templates/bitbucket).
func FromEnv(getenv func(string) string) (forge.CI, error) {
	c := forge.CI{
		APIURL:  DefaultAPIURL,
		HeadSHA: getenv("BITBUCKET_COMMIT"),
		Author:  getenv(AuthorVariable),
	}
	for _, name := range TokenVariables {
		if c.Token = getenv(name); c.Token != "" {
			break
		}
	}
	if user := getenv(UsernameVariable); user != "" && c.Token != "" {
		if strings.Contains(user, ":") {
			return c, fmt.Errorf("%s=%q holds a colon, which HTTP Basic cannot carry in a username", UsernameVariable, user)
		}
		c.Token = user + ":" + c.Token
	}
	c.Repository = getenv("BITBUCKET_REPO_FULL_NAME")
	if ws, slug := getenv("BITBUCKET_WORKSPACE"), getenv("BITBUCKET_REPO_SLUG"); ws != "" && slug != "" {
		c.Repository = ws + "/" + slug
	}
	if c.Repository != "" && strings.Count(c.Repository, "/") != 1 {
		return c, fmt.Errorf("BITBUCKET_REPO_FULL_NAME=%q is not workspace/slug", c.Repository)
	}
	if s := getenv("BITBUCKET_PR_ID"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("BITBUCKET_PR_ID=%q is not a positive number", s)
		}
		c.PR = n
	}
	for _, b := range []string{getenv("BITBUCKET_PR_DESTINATION_BRANCH"), getenv("BITBUCKET_BRANCH")} {
		if b != "" {
			c.Branches = append(c.Branches, b)
		}
	}
	if n := getenv("BITBUCKET_BUILD_NUMBER"); n != "" && c.Repository != "" {
		if _, err := strconv.ParseUint(n, 10, 64); err != nil {
			return c, fmt.Errorf("BITBUCKET_BUILD_NUMBER=%q is not a number", n)
		}
		c.RunURL = webBase(getenv("BITBUCKET_GIT_HTTP_ORIGIN"), c.Repository) + "/pipelines/results/" + n
	}
	return c, nil
}

// webBase is the repository's page: BITBUCKET_GIT_HTTP_ORIGIN (which Pipelines gives
// as http://bitbucket.org/workspace/slug) over https, else bitbucket.org's.
func webBase(origin, repository string) string {
	if u, err := url.Parse(origin); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		u.Scheme, u.User, u.RawQuery, u.Fragment = "https", nil, "", ""
		return strings.TrimSuffix(u.String(), "/")
	}
	return "https://bitbucket.org/" + repository
}
