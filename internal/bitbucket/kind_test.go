package bitbucket

import (
	"reflect"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// pipelines is a pull-requests pipeline step's default variables, as Bitbucket
// Pipelines sets them, and the repository's secured token.
func pipelines() map[string]string {
	return map[string]string{
		"CI": "true", "BITBUCKET_BUILD_NUMBER": "12", "BITBUCKET_PIPELINE_UUID": "{a1b2c3}", "BITBUCKET_STEP_UUID": "{d4e5f6}",
		"BITBUCKET_WORKSPACE": "acme", "BITBUCKET_REPO_SLUG": "gitops", "BITBUCKET_REPO_FULL_NAME": "acme/gitops",
		"BITBUCKET_COMMIT": "0123456789abcdef0123456789abcdef01234567", "BITBUCKET_BRANCH": "feature/x", "BITBUCKET_PR_ID": "7",
		"BITBUCKET_PR_DESTINATION_BRANCH": "main", "BITBUCKET_GIT_HTTP_ORIGIN": "http://bitbucket.org/acme/gitops",
		"BITBUCKET_STEP_OIDC_TOKEN": "eyJ.oidc", "DRIFT_BITBUCKET_TOKEN": "repo-token",
	}
}

// TestFromEnvReadsAPipelinesStep: a pull-requests step gives the repository, the pull
// request, the head commit, the destination and source branches and the results
// page; no base (no variable names the destination's commit); a username makes the
// token HTTP Basic credentials; a malformed variable is an error naming it.
func TestFromEnvReadsAPipelinesStep(t *testing.T) {
	t.Parallel()
	env := pipelines()
	get := func(k string) string { return env[k] }
	if !InCI(get) {
		t.Fatal("a Pipelines step is not seen as one")
	}
	c, err := FromEnv(get)
	if err != nil {
		t.Fatal(err)
	}
	want := forge.CI{Token: "repo-token", APIURL: DefaultAPIURL, Repository: "acme/gitops", PR: 7, HeadSHA: env["BITBUCKET_COMMIT"],
		Branches: []string{"main", "feature/x"}, RunURL: "https://bitbucket.org/acme/gitops/pipelines/results/12"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("ci = %+v\nwant %+v", c, want)
	}
	if err := Kind.Check(c, true); err != nil {
		t.Error(err)
	}
	env[UsernameVariable], env[AuthorVariable] = "ann@example.com", "{7d6f}"
	if c, _ := FromEnv(get); c.Token != "ann@example.com:repo-token" || c.Author != "{7d6f}" {
		t.Errorf("with a username: %+v", c)
	}
	for k, v := range map[string]string{"BITBUCKET_PR_ID": "seven", "BITBUCKET_BUILD_NUMBER": "x", UsernameVariable: "a:b"} {
		env := pipelines()
		env[k] = v
		if _, err := FromEnv(func(s string) string { return env[s] }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%q: %v", k, v, err)
		}
	}
	for _, k := range []string{"CI", "BITBUCKET_BUILD_NUMBER", "BITBUCKET_PIPELINE_UUID"} {
		env := pipelines()
		delete(env, k)
		if InCI(func(s string) string { return env[s] }) {
			t.Errorf("without %s, still in Pipelines", k)
		}
	}
	for _, s := range []string{"DRIFT_BITBUCKET_TOKEN", "BITBUCKET_STEP_OIDC_TOKEN"} {
		found := false
		for _, x := range Kind.Secrets {
			found = found || x == s
		}
		if !found {
			t.Errorf("%s is not among the secrets", s)
		}
	}
}

// TestOpenChoosesTheDialectByTheAPIURL: Cloud's /2.0 and Data Center's /rest/api/1.0
// or /rest/api/latest (under a context path too) open their clients; anything else
// is an error that says what is expected, as is a repository that is not two names.
func TestOpenChoosesTheDialectByTheAPIURL(t *testing.T) {
	t.Parallel()
	for api, want := range map[string]string{
		"https://api.bitbucket.org/2.0":                  "*bitbucket.cloud",
		"https://api.bitbucket.org/2.0/":                 "*bitbucket.cloud",
		"https://git.example/rest/api/1.0":               "*bitbucket.dataCenter",
		"https://git.example/bitbucket/rest/api/latest/": "*bitbucket.dataCenter",
		"https://git.example/":                           "neither",
		"ftp://git.example/rest/api/1.0":                 "not an http(s) URL",
		"https://user:pass@git.example/rest/api/1.0":     "not an http(s) URL",
	} {
		s, err := Open(forge.CI{APIURL: api, Repository: "GIT/gitops"}, nil)
		got := ""
		if s != nil {
			got = reflect.TypeOf(s).String()
		} else {
			got = err.Error()
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s: %s, want %s", api, got, want)
		}
	}
	for _, repo := range []string{"gitops", "acme/gitops/x", "/gitops", "acme/"} {
		if _, err := Open(forge.CI{APIURL: DefaultAPIURL, Repository: repo}, nil); err == nil || !strings.Contains(err.Error(), "workspace/slug") {
			t.Errorf("%q: %v", repo, err)
		}
	}
	s, err := Open(forge.CI{APIURL: "https://git.example/bitbucket/rest/api/latest", Repository: "GIT/gitops"}, nil)
	if err != nil || s.(*dataCenter).repo() != "https://git.example/bitbucket/rest/api/latest/projects/GIT/repos/gitops" {
		t.Errorf("data center's repository: %v", err)
	}
}
