package gitea

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// A Gitea Actions or Forgejo Actions job is described by GitHub's variables, which
// the server fills from its own context (services/actions/context.go): GITHUB_API_URL
// is the instance's ROOT_URL with api/v1, GITHUB_SERVER_URL its ROOT_URL,
// GITHUB_REPOSITORY owner/name, GITHUB_EVENT_PATH the event's payload (a
// pull_request event's holds the pull request, its head and its base),
// GITHUB_SHA the commit the run is for, GITHUB_RUN_NUMBER the run's index in the
// repository (its page is /{owner}/{repo}/actions/runs/{index}), GITHUB_BASE_REF and
// GITHUB_HEAD_REF a pull request's branches, GITHUB_REF_NAME a push's branch.

// repository is owner/name as Gitea allows them.
var repository = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// event is what drift reads of a pull_request (or pull_request_target) payload.
type event struct {
	Number      int64 `json:"number"`
	PullRequest *struct {
		Number int64 `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"head"`
		Base struct {
			SHA string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"base"`
	} `json:"pull_request"`
}

// FromEnv reads a Gitea Actions or Forgejo Actions job's variables and the token
// (TokenVariables). A variable that is set but malformed is an error naming it.
func FromEnv(getenv func(string) string) (forge.CI, error) {
	c := forge.CI{Repository: getenv("GITHUB_REPOSITORY"), HeadSHA: getenv("GITHUB_SHA")}
	for _, name := range TokenVariables {
		if c.Token = getenv(name); c.Token != "" {
			break
		}
	}
	if c.Repository != "" && !repository.MatchString(c.Repository) {
		return c, fmt.Errorf("GITHUB_REPOSITORY=%q is not owner/name", c.Repository)
	}
	server := strings.TrimSuffix(getenv("GITHUB_SERVER_URL"), "/")
	c.APIURL = strings.TrimSuffix(getenv("GITHUB_API_URL"), "/")
	if c.APIURL == "" && server != "" {
		c.APIURL = server + "/api/v1"
	}
	if path := getenv("GITHUB_EVENT_PATH"); path != "" {
		ev, err := readEvent(path)
		if err != nil {
			return c, err
		}
		if pr := ev.PullRequest; pr != nil {
			c.PR = max(pr.Number, ev.Number)
			c.BaseSHA = pr.Base.SHA
			if pr.Head.SHA != "" {
				c.HeadSHA = pr.Head.SHA
			}
		}
	}
	for _, b := range []string{getenv("GITHUB_BASE_REF"), getenv("GITHUB_HEAD_REF")} {
		if b != "" {
			c.Branches = append(c.Branches, b)
		}
	}
	if len(c.Branches) == 0 {
		if b := getenv("GITHUB_REF_NAME"); b != "" {
			c.Branches = []string{b}
		} else if b, ok := strings.CutPrefix(getenv("GITHUB_REF"), "refs/heads/"); ok {
			c.Branches = []string{b}
		}
	}
	if n := getenv("GITHUB_RUN_NUMBER"); n != "" {
		if i, err := strconv.ParseInt(n, 10, 64); err != nil || i <= 0 {
			return c, fmt.Errorf("GITHUB_RUN_NUMBER=%q is not a positive number", n)
		}
		if server != "" && c.Repository != "" {
			c.RunURL = server + "/" + c.Repository + "/actions/runs/" + n
		}
	}
	return c, nil
}

// readEvent reads the event payload at path.
func readEvent(path string) (event, error) {
	var ev event
	data, err := os.ReadFile(path)
	if err != nil {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH=%q is not an event's JSON payload: %w", path, err)
	}
	if pr := ev.PullRequest; pr != nil && (pr.Number < 0 || ev.Number < 0) {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH=%q: the pull request's number is not positive", path)
	}
	return ev, nil
}
