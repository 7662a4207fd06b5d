package github

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Context is where a report goes, as the Actions environment describes it; every
// field can be set by a flag instead.
type Context struct {
	Token      string
	Repository string // owner/name
	APIURL     string
	PR         int
	HeadSHA    string
	// Author is the login drift's comments and issues are written by; empty means
	// the token's own user, or github-actions[bot] for an installation token.
	Author string
	// StepSummary is the file GitHub shows as the job summary ("" outside Actions).
	StepSummary string
	// RunURL is the workflow run's page, where its job summaries and artifacts are
	// ("" outside Actions).
	RunURL string
}

// Owner and Repo split Repository.
func (c Context) Owner() string { o, _, _ := strings.Cut(c.Repository, "/"); return o }

// Repo is the repository's name.
func (c Context) Repo() string { _, r, _ := strings.Cut(c.Repository, "/"); return r }

// FromEnv reads GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_STEP_SUMMARY,
// and the pull request's number and head SHA from the event at GITHUB_EVENT_PATH.
func FromEnv(getenv func(string) string) (Context, error) {
	c := Context{
		Token:       getenv("GITHUB_TOKEN"),
		Repository:  getenv("GITHUB_REPOSITORY"),
		APIURL:      getenv("GITHUB_API_URL"),
		StepSummary: getenv("GITHUB_STEP_SUMMARY"),
		HeadSHA:     getenv("GITHUB_SHA"),
	}
	if server, id := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_RUN_ID"); server != "" && c.Repository != "" && id != "" {
		c.RunURL = strings.TrimSuffix(server, "/") + "/" + c.Repository + "/actions/runs/" + id
	}
	if path := getenv("GITHUB_EVENT_PATH"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("failed to read the GitHub event %s: %w", path, err)
		}
		var ev struct {
			Number      int `json:"number"`
			PullRequest *struct {
				Number int `json:"number"`
				Head   struct {
					SHA string `json:"sha"`
				} `json:"head"`
			} `json:"pull_request"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return c, fmt.Errorf("the GitHub event %s is not JSON: %w", path, err)
		}
		c.PR = ev.Number
		if ev.PullRequest != nil {
			c.PR = ev.PullRequest.Number
			c.HeadSHA = ev.PullRequest.Head.SHA
		}
	}
	if c.APIURL == "" {
		c.APIURL = "https://api.github.com"
	}
	return c, nil
}

// Check says what is missing to post to a pull request.
func (c Context) Check() error {
	var missing []string
	if c.Token == "" {
		missing = append(missing, "a token (GITHUB_TOKEN or --github-token)")
	}
	if !strings.Contains(c.Repository, "/") {
		missing = append(missing, "the repository as owner/name (GITHUB_REPOSITORY or --github-repository)")
	}
	if c.PR <= 0 {
		missing = append(missing, "the pull request number (a pull_request event in GITHUB_EVENT_PATH, or --github-pr)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("cannot post to GitHub: missing %s", strings.Join(missing, ", "))
	}
	return nil
}
