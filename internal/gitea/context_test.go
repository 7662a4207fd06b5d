package gitea

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// giteaPullRequest is a pull_request event's payload as Gitea writes it
// (api.PullRequestPayload), trimmed to what drift reads and some of what it does not.
const giteaPullRequest = `{"action":"synchronized","number":7,"pull_request":{"id":91,"number":7,"state":"open",
 "base":{"label":"main","ref":"main","sha":"89abcdef0123456789abcdef0123456789abcdef","repo_id":3},
 "head":{"label":"bump","ref":"bump","sha":"0123456789abcdef0123456789abcdef01234567","repo_id":3},
 "merge_base":"89abcdef0123456789abcdef0123456789abcdef"},"repository":{"full_name":"acme/gitops"}}`

// runner is a Gitea Actions job's environment for a pull request, as act_runner sets
// it from the server's context (ROOT_URL with its trailing slash).
func runner(t *testing.T, extra map[string]string) func(string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, []byte(giteaPullRequest), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"GITEA_ACTIONS": "true", "GITHUB_ACTIONS": "true", "CI": "true",
		"GITHUB_SERVER_URL": "https://gitea.example/", "GITHUB_API_URL": "https://gitea.example/api/v1",
		"GITHUB_REPOSITORY": "acme/gitops", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": path,
		"GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567", "GITHUB_REF": "refs/pull/7/head", "GITHUB_REF_NAME": "7/head",
		"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "bump", "GITHUB_RUN_ID": "1234", "GITHUB_RUN_NUMBER": "56",
		"GITHUB_TOKEN": "job-token", "GITEA_TOKEN": "job-token",
	}
	for k, v := range extra {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// TestAPullRequestJobSaysWhereTheReportGoes: a Gitea Actions pull request job gives
// the API, the repository, the pull request, its head and base commits, its branches
// and the run's page (by its number, as Gitea's run pages are addressed), and the
// token in the order of TokenVariables.
func TestAPullRequestJobSaysWhereTheReportGoes(t *testing.T) {
	t.Parallel()
	got, err := FromEnv(runner(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := forge.CI{Token: "job-token", APIURL: "https://gitea.example/api/v1", Repository: "acme/gitops", PR: 7,
		HeadSHA: "0123456789abcdef0123456789abcdef01234567", BaseSHA: "89abcdef0123456789abcdef0123456789abcdef",
		Branches: []string{"main", "bump"}, RunURL: "https://gitea.example/acme/gitops/actions/runs/56"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromEnv =\n%+v\nwant\n%+v", got, want)
	}
	if err := Kind.Check(got, true); err != nil {
		t.Errorf("Check: %v", err)
	}
	got, _ = FromEnv(runner(t, map[string]string{"DRIFT_GITEA_TOKEN": "drift-token", "FORGEJO_ACTIONS": "true", "GITEA_ACTIONS": ""}))
	if got.Token != "drift-token" {
		t.Errorf("token = %q, want DRIFT_GITEA_TOKEN's", got.Token)
	}
}

// TestAPushOrScheduleJobHasNoPullRequest: outside a pull request the branch is the
// run's and no pull request is named, so only the issue can be kept; the API URL
// falls back to the server's.
func TestAPushOrScheduleJobHasNoPullRequest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, []byte(`{"schedule":"0 6 * * *"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := FromEnv(runner(t, map[string]string{"GITHUB_EVENT_NAME": "schedule", "GITHUB_EVENT_PATH": path, "GITHUB_BASE_REF": "",
		"GITHUB_HEAD_REF": "", "GITHUB_REF_NAME": "main", "GITHUB_API_URL": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if got.PR != 0 || got.BaseSHA != "" || !reflect.DeepEqual(got.Branches, []string{"main"}) || got.APIURL != "https://gitea.example/api/v1" {
		t.Errorf("FromEnv = %+v", got)
	}
	if err := Kind.Check(got, true); err == nil || !strings.Contains(err.Error(), "--gitea-pr") {
		t.Errorf("Check for a review: %v", err)
	}
	if err := Kind.Check(got, false); err != nil {
		t.Errorf("Check for the issue: %v", err)
	}
}

// TestMalformedVariablesAreNamed: a variable set but malformed is an error that names
// it.
func TestMalformedVariablesAreNamed(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string]map[string]string{
		"GITHUB_REPOSITORY": {"GITHUB_REPOSITORY": "acme/gitops/extra"},
		"GITHUB_RUN_NUMBER": {"GITHUB_RUN_NUMBER": "56a"},
		"GITHUB_EVENT_PATH": {"GITHUB_EVENT_PATH": bad},
	} {
		if _, err := FromEnv(runner(t, env)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := FromEnv(runner(t, map[string]string{"GITHUB_EVENT_PATH": filepath.Join(t.TempDir(), "missing.json")})); err == nil || !strings.Contains(err.Error(), "GITHUB_EVENT_PATH") {
		t.Errorf("a missing event file: %v", err)
	}
}

// TestInCIIsGiteaOrForgejoNotGitHub: both runners say GITHUB_ACTIONS=true; only
// their own variable tells them from GitHub's.
func TestInCIIsGiteaOrForgejoNotGitHub(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"GITEA_ACTIONS": "true", "GITHUB_ACTIONS": "true"}, true},
		{map[string]string{"FORGEJO_ACTIONS": "true", "GITHUB_ACTIONS": "true"}, true},
		{map[string]string{"GITHUB_ACTIONS": "true"}, false},
		{map[string]string{}, false},
	} {
		if got := InCI(env(c.env)); got != c.want {
			t.Errorf("InCI(%v) = %t", c.env, got)
		}
	}
}

// TestOpenRefusesWhatIsNotAGiteaAPI: the API URL must be an http(s) /api/v1 URL
// without credentials, the repository owner/name.
func TestOpenRefusesWhatIsNotAGiteaAPI(t *testing.T) {
	t.Parallel()
	for _, ci := range []forge.CI{
		{APIURL: "https://gitea.example", Repository: "a/b"},
		{APIURL: "ftp://gitea.example/api/v1", Repository: "a/b"},
		{APIURL: "https://user:pw@gitea.example/api/v1", Repository: "a/b"},
		{APIURL: "https://gitea.example/api/v1", Repository: "a"},
		{APIURL: "https://gitea.example/api/v1", Repository: "a/b/c"},
	} {
		if _, err := Open(ci, nil); err == nil {
			t.Errorf("Open(%+v) took it", ci)
		}
	}
	if _, err := Open(forge.CI{APIURL: "https://gitea.example/sub/api/v1/", Repository: "a/b"}, nil); err != nil {
		t.Errorf("an instance under a path: %v", err)
	}
}
