package gitlab

import (
	"compress/gzip"
	"crypto/sha1"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/gitlab/gitlabtest"
	"github.com/drift-gitops/drift/internal/resultcache"
	"github.com/drift-gitops/drift/internal/testenv"
)

// gitlabCILocal finds gitlab-ci-local as hack/gitlab-ci-local.sh installs it; outside
// CI a machine without it skips the test, in CI it must be there.
func gitlabCILocal(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs("../.tools/node_modules/.bin/gitlab-ci-local")
	if err == nil {
		if _, err = os.Stat(bin); err == nil {
			if _, err = exec.LookPath("rsync"); err == nil {
				return bin
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("gitlab-ci-local (and the rsync it runs) are needed: run hack/gitlab-ci-local.sh: %v", err)
	}
	t.Skipf("gitlab-ci-local is not installed (hack/gitlab-ci-local.sh installs it): %v", err)
	return ""
}

// envtestIndexServer serves an envtest release index listing v1.36.3 for this
// platform, with an archive of the test's own etcd and kube-apiserver, as drift setup
// downloads them.
func envtestIndexServer(t *testing.T) *httptest.Server {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "envtest.tar.gz")
	hash, err := testenv.EnvtestArchive(os.Getenv("KUBEBUILDER_ASSETS"), archive, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/envtest-releases.yaml":
			fmt.Fprintf(w, "releases:\n  v1.36.3:\n    envtest-v1.36.3-%s-%s.tar.gz:\n      hash: %s\n      selfLink: %s/archive.tar.gz\n",
				runtime.GOOS, runtime.GOARCH, hash, srv.URL)
		case "/archive.tar.gz":
			http.ServeFile(w, r, archive)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const projectURL = "https://gitlab.example/acme/gitops.git"

func application(name, path string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + ", namespace: argocd}\nspec:\n  project: default\n" +
		"  source: {repoURL: " + projectURL + ", targetRevision: HEAD, path: " + path + "}\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n"
}

// TestAMergeRequestsCommittedCacheIsNeverDriftsState runs the component, through
// gitlab-ci-local as a merge request pipeline on a runner (shell executor), on a
// merge request that commits a .drift-cache of its own in drift's layouts: control-plane
// binaries that would leave a marker, a key with a discovery memo and a pack sealed
// with it that would hide the Application the merge request adds, a chart record;
// then one that commits .drift-cache/dryrun as a link to a directory beside the
// checkout. Nothing planted runs, the Application and the cluster-admin binding it
// deploys are in the note, and the directory beside the checkout is whole.
func TestAMergeRequestsCommittedCacheIsNeverDriftsState(t *testing.T) {
	testenv.Require(t)
	glci := gitlabCILocal(t)
	rel, bin := releaseServerOf(t)
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	index := envtestIndexServer(t)
	srv := gitlabtest.New(token)
	defer srv.Close()

	work := t.TempDir()
	victim := filepath.Join(work, "victim")
	if err := os.MkdirAll(filepath.Join(victim, "v2"), 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(victim, "v2", "00000000000000000001-1.pack")
	if err := os.WriteFile(precious, []byte("a sibling project's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(work, "planted-binary-ran")
	repo, err := gitfixture.Init(filepath.Join(work, "checkout"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Git("remote", "add", "origin", projectURL); err != nil {
		t.Fatal(err)
	}
	template, err := os.ReadFile("../../templates/drift/template.yml")
	if err != nil {
		t.Fatal(err)
	}
	pipeline := "include:\n  - local: templates/drift/template.yml\n    inputs:\n      cluster: ephemeral\n      version: " + version +
		"\n      install-url: " + rel.URL + "/drift-gitops/drift/main/install.sh\n"
	base, err := repo.CommitFiles(map[string]string{
		".gitlab-ci.yml": pipeline, "templates/drift/template.yml": string(template),
		"argocd/shop.yaml": application("shop", "apps"),
		"apps/ns.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "apps/web.yaml": cm("web", "blue"),
		"lib/crb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: lib-admin}\n" +
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: intruder, namespace: shop}]\n",
	}, "base")
	if err != nil {
		t.Fatal(err)
	}

	// What the merge request plants: drift's layouts, sealed with a key it commits.
	planted := t.TempDir()
	key := cachedir.KeyPath(func(string) string { return "" }, filepath.Join(planted, "cache"))
	theirs, err := cachedir.Open(cachedir.Options{Getenv: func(k string) string {
		return map[string]string{"DRIFT_CACHE_DIR": filepath.Join(planted, "cache")}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	libApp := application("lib", "lib")
	blob := gitBlobID(libApp)
	files := map[string]string{"apps/web.yaml": cm("web", "green"), "argocd/lib.yaml": libApp}
	// The memo as the released drift reads it: its build's id, this work tree's path.
	scans := resultcache.OpenScans(theirs.Sub("dryrun"), resultcache.BuildIDOf(info, bin), repo.Dir)
	scans.Remember(blob, 2) // discover.ScanPlain: names no Argo CD group
	if err := scans.Save(); err != nil {
		t.Fatal(err)
	}
	if err := theirs.WriteSealed("charts/refs/"+strings.Repeat("ab", 32)+".json", []byte(`{"digest":"`+strings.Repeat("cd", 32)+`"}`)); err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(theirs.Path(), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			rel, _ := filepath.Rel(theirs.Path(), p)
			files[".drift-cache/"+filepath.ToSlash(rel)] = string(must(os.ReadFile(p)))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	files[".drift-cache/cache.key"] = string(must(os.ReadFile(key)))
	script := "#!/bin/sh\necho \"$0 $*\" >> " + marker + "\nenv >> " + marker + "\nexec sleep 30\n"
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		files[".drift-cache/assets/v1.36.3/"+bin] = script
	}
	head, err := repo.CommitFiles(files, "the change, and drift's state planted")
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if err := os.Chmod(filepath.Join(repo.Dir, ".drift-cache", "assets", "v1.36.3", bin), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	run := func(head string, pipeline int64) string {
		t.Helper()
		srv.AddPipeline(pipeline, head, "refs/merge-requests/7/head", "drift-diff")
		args := []string{"--force-shell-executor", "drift-diff"}
		for k, v := range map[string]string{
			"GITLAB_CI": "true", "CI": "true", "CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_EVENT_TYPE": "detached",
			"CI_COMMIT_SHA": head, "CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_PIPELINE_ID": fmt.Sprint(pipeline), "CI_PROJECT_ID": "42",
			"CI_API_V4_URL": srv.URL + "/api/v4", "CI_DEFAULT_BRANCH": "main", "CI_JOB_URL": "https://gitlab.example/acme/gitops/-/jobs/5",
			"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
			"CI_JOB_TOKEN": "job-token-component-value", "DRIFT_GITLAB_TOKEN": token, "DRIFT_RELEASES_URL": rel.URL + "/download",
			"DRIFT_ENVTEST_INDEX_URL": index.URL + "/envtest-releases.yaml", "TMPDIR": t.TempDir(), "XDG_CACHE_HOME": filepath.Join(work, "home-cache"),
		} {
			args = append(args, "--variable", k+"="+v)
		}
		cmd := exec.Command(glci, args...)
		cmd.Dir = repo.Dir
		env := []string{}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KUBEBUILDER_ASSETS=") && !strings.HasPrefix(kv, "KUBECONFIG=") {
				env = append(env, kv)
			}
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gitlab-ci-local: %v\n%s", err, out)
		}
		noTokenIn(t, string(out))
		return string(out)
	}

	log := run(head, 900)
	if !strings.Contains(log, ".drift-cache is in the merge request's files") || !strings.Contains(log, "drift: created the merge request note") {
		t.Errorf("log:\n%s", log)
	}
	notes := srv.Notes(7)
	if len(notes) != 1 || !strings.Contains(notes[0].Body, "1 to add, 1 to modify") || !strings.Contains(notes[0].Body, "ClusterRoleBinding lib-admin") {
		t.Fatalf("the note (want the Application the memo would hide, its binding an addition):\n%+v\n%s", notes, log)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Errorf("a planted binary ran:\n%.400s", data)
	}

	// The merge request's .drift-cache/dryrun a link to the directory beside the checkout.
	// (The first job's artifacts are not the repository's.)
	if err := os.RemoveAll(filepath.Join(repo.Dir, "drift-report")); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Git("rm", "-r", "-q", "-f", ".drift-cache"); err != nil {
		t.Fatal(err)
	}
	// What the first job saved there for GitLab's cache goes too (its renderings).
	if err := os.RemoveAll(filepath.Join(repo.Dir, ".drift-cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo.Dir, ".drift-cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../victim", filepath.Join(repo.Dir, ".drift-cache", "dryrun")); err != nil {
		t.Fatal(err)
	}
	linked, err := repo.CommitFiles(map[string]string{"apps/web.yaml": cm("web", "yellow")}, "a link to the runner's other projects")
	if err != nil {
		t.Fatal(err)
	}
	log = run(linked, 901)
	if !strings.Contains(log, "drift: updated the merge request note") {
		t.Errorf("log:\n%s", log)
	}
	if data, err := os.ReadFile(precious); err != nil || string(data) != "a sibling project's file" {
		t.Errorf("the directory beside the checkout: %q %v", data, err)
	}
	if fi, err := os.Lstat(filepath.Join(repo.Dir, ".drift-cache", "dryrun")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t.Error("the job left the link for GitLab to save as its cache")
	}
}

// gitBlobID is the git object id of a file holding content.
func gitBlobID(content string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00%s", len(content), content)
	return hex.EncodeToString(h.Sum(nil))
}
