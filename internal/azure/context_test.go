package azure

import (
	"slices"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestFromEnvReadsAPullRequestBuild: an Azure Repos pull request build's variables
// give the organization, project/repository, the pull request, its branches, the
// merge commit the run builds, the run's page, and the token in order.
func TestFromEnvReadsAPullRequestBuild(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"TF_BUILD": "True", "SYSTEM_COLLECTIONURI": "https://dev.azure.com/acme/", "SYSTEM_TEAMPROJECT": "shop floor",
		"BUILD_REPOSITORY_NAME": "gitops", "BUILD_REPOSITORY_PROVIDER": "TfsGit", "SYSTEM_PULLREQUEST_PULLREQUESTID": "42",
		"SYSTEM_PULLREQUEST_TARGETBRANCH": "refs/heads/main", "SYSTEM_PULLREQUEST_SOURCEBRANCH": "refs/heads/feature/x",
		"BUILD_SOURCEVERSION": "abc123", "BUILD_BUILDID": "99", "SYSTEM_ACCESSTOKEN": "job", "BUILD_SOURCEBRANCH": "refs/pull/42/merge",
	}
	if !InCI(env(vars)) || InCI(env(map[string]string{})) {
		t.Error("InCI")
	}
	c, err := FromEnv(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if c.APIURL != "https://dev.azure.com/acme/" || c.Repository != "shop floor/gitops" || c.PR != 42 || c.HeadSHA != "abc123" || c.BaseSHA != "" ||
		!slices.Equal(c.Branches, []string{"main", "feature/x"}) || c.RunURL != "https://dev.azure.com/acme/shop%20floor/_build/results?buildId=99" || c.Token != "job" {
		t.Errorf("%+v", c)
	}
	vars["DRIFT_AZURE_TOKEN"] = "pat"
	delete(vars, "SYSTEM_PULLREQUEST_PULLREQUESTID")
	vars["BUILD_SOURCEBRANCH"] = "refs/heads/main"
	delete(vars, "SYSTEM_COLLECTIONURI")
	vars["SYSTEM_TEAMFOUNDATIONCOLLECTIONURI"] = "https://tfs.example/tfs/DefaultCollection/"
	if c, err = FromEnv(env(vars)); err != nil || c.Token != "pat" || c.PR != 0 || !slices.Equal(c.Branches, []string{"main"}) || c.APIURL != "https://tfs.example/tfs/DefaultCollection/" {
		t.Errorf("%+v %v", c, err)
	}
	for k, v := range map[string]string{"SYSTEM_PULLREQUEST_PULLREQUESTID": "x", "BUILD_BUILDID": "-1", "BUILD_REPOSITORY_PROVIDER": "GitHub"} {
		bad := map[string]string{k: v}
		if _, err := FromEnv(env(bad)); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
