package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/discover"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/resultcache"
)

// originURL is the remote the state tests' repositories are known by, which their
// Argo CD and Flux objects name.
const originURL = "https://github.com/example/state.git"

// crbLib is a cluster-admin ClusterRoleBinding that nothing in the base deploys.
const crbLib = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: lib-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: intruder, namespace: default}]
`

func cmApp(color string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata: {color: " + color + "}\n"
}

func argoApp(name, path string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + originURL + `, targetRevision: HEAD, path: ` + path + `}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`
}

func fluxKustomization(name, path string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: flux-system}
spec:
  interval: 10m
  path: ` + path + `
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`
}

// stateRepo commits base, then head over it, in a repository known by originURL, and
// returns it with the two commits.
func stateRepo(t *testing.T, base, head map[string]string) (r *gitfixture.Repo, baseSHA, headSHA string) {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("remote", "add", "origin", originURL); err != nil {
		t.Fatal(err)
	}
	if baseSHA, err = r.CommitFiles(base, "base"); err != nil {
		t.Fatal(err)
	}
	if headSHA, err = r.CommitFiles(head, "the change"); err != nil {
		t.Fatal(err)
	}
	return r, baseSHA, headSHA
}

// TestAdditionsAreAdditionsOnTheEphemeralServer: the base holds lib/crb.yaml, which
// nothing deploys; the change adds a target over it (an Argo CD Application, a
// drift.yaml target, a Flux Kustomization) and edits the existing target. On an
// ephemeral server loaded with the base, the ClusterRoleBinding is an addition with
// its risk, never loaded as if it were there: exit 1, not "no changes". So is what a
// new Application of a remote chart (fetched, then cached) renders.
func TestAdditionsAreAdditionsOnTheEphemeralServer(t *testing.T) {
	fluxCRDs, err := os.ReadFile(filepath.Join("testdata", "flux-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fluxBase := map[string]string{
		"clusters/prod/flux-system/gotk-components.yaml": string(fluxCRDs),
		"clusters/prod/flux-system/gotk-sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n" +
			"spec: {interval: 1m, url: " + originURL + ", ref: {branch: main}}\n---\n" + fluxKustomization("flux-system", "./clusters/prod"),
		"clusters/prod/flux-system/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [gotk-components.yaml, gotk-sync.yaml]\n",
		"clusters/prod/flux-system/namespace.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n",
		"clusters/prod/app.yaml":                       fluxKustomization("app", "./app"),
	}
	for _, c := range []struct {
		name       string
		base, head map[string]string
		args       []string
	}{
		{name: "a new Application",
			base: map[string]string{"argocd/app.yaml": argoApp("app", "app")},
			head: map[string]string{"argocd/lib.yaml": argoApp("lib", "lib")}},
		{name: "a new drift.yaml target",
			base: map[string]string{"drift.yaml": "version: 1\ntargets:\n  - {name: app, path: app}\n"},
			head: map[string]string{"drift.yaml": "version: 1\ntargets:\n  - {name: app, path: app}\n  - {name: lib, path: lib}\n"}},
		{name: "a new Flux Kustomization",
			base: fluxBase,
			head: map[string]string{"clusters/prod/lib.yaml": fluxKustomization("lib", "./lib")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := map[string]string{"lib/crb.yaml": crbLib, "app/cm.yaml": cmApp("blue")}
			for p, data := range c.base {
				base[p] = data
			}
			head := map[string]string{"app/cm.yaml": cmApp("green")}
			for p, data := range c.head {
				head[p] = data
			}
			r, baseSHA, headSHA := stateRepo(t, base, head)
			rep, o := driftJSON(t, append([]string{"diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", headSHA}, c.args...)...)
			if o.code != exitChanges {
				t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
			}
			crb := find(t, rep, "ClusterRoleBinding", "lib-admin")
			if crb.Category != "add" || len(crb.Risks) == 0 {
				t.Errorf("the ClusterRoleBinding the change deploys: %s with risks %v, want an addition with its risk", crb.Category, crb.Risks)
			}
			if cm := find(t, rep, "ConfigMap", "app"); cm.Category != "modify" {
				t.Errorf("ConfigMap app: %s, want modify", cm.Category)
			}
			if rep.Summary.Add < 1 || rep.Summary.Risky < 1 || !rep.Complete {
				t.Errorf("summary %+v, complete %v", rep.Summary, rep.Complete)
			}
		})
	}

	t.Run("a new Application of a remote chart", func(t *testing.T) {
		t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
		srv := chartRepository(t)
		config := "discover: true\ncharts:\n  allow: [" + srv.URL() + "]\n"
		web := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + srv.URL() + `, chart: web, targetRevision: 1.0.0}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`
		r, baseSHA, headSHA := stateRepo(t,
			map[string]string{"drift.yaml": config, "argocd/app.yaml": argoApp("app", "app"), "app/cm.yaml": cmApp("blue")},
			map[string]string{"argocd/web.yaml": web})
		// The chart fetched once, so that the base could render it from the cache.
		if _, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--ref", headSHA); o.code != exitChanges {
			t.Fatalf("first run: exit %d\n%s", o.code, o.stderr)
		}
		rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", headSHA)
		if o.code != exitChanges {
			t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
		}
		if cm := find(t, rep, "ConfigMap", "web-settings"); cm.Category != "add" {
			t.Errorf("the new Application's ConfigMap: %s, want add", cm.Category)
		}
	})
}

// TestAPlantedScanMemoHidesNothing: discovery's memo of what each file holds, planted
// in drift's cache directory in drift's own format (header, build, a line naming the
// new Application's blob as holding no Argo CD object), does not hide the
// Application: it was not sealed with the cache's key, so it is no memo.
func TestAPlantedScanMemoHidesNothing(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("DRIFT_CACHE_DIR", cache)
	r, baseSHA, headSHA := stateRepo(t,
		map[string]string{"argocd/app.yaml": argoApp("app", "app"), "app/cm.yaml": cmApp("blue"), "lib/crb.yaml": crbLib},
		map[string]string{"argocd/lib.yaml": argoApp("lib", "lib"), "app/cm.yaml": cmApp("green")})
	blob, err := r.Git("rev-parse", headSHA+":argocd/lib.yaml")
	if err != nil {
		t.Fatal(err)
	}
	memo := "drift-scans 1 " + resultcache.BuildID() + "\n" + strings.TrimSpace(blob) + " " + string(rune('0'+discover.ScanPlain)) + "\n"
	for _, dir := range []string{"v2", "v" + string(rune('0'+resultcache.Format))} {
		p := filepath.Join(cache, "dryrun", dir, "scans")
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		// Named by the hash of the work tree's path, as drift names it.
		root, _ := filepath.EvalSymlinks(r.Dir)
		for _, rootPath := range []string{r.Dir, root} {
			if err := os.WriteFile(filepath.Join(p, sha256Hex(rootPath)[:32]+".txt"), []byte(memo), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", headSHA)
	if o.code != exitChanges || targetNamed(rep, "Application/lib") == nil {
		t.Fatalf("exit %d, targets %v, want Application/lib previewed\n%s", o.code, targetNames(rep), o.stderr)
	}
	if crb := find(t, rep, "ClusterRoleBinding", "lib-admin"); crb.Category != "add" || len(crb.Risks) == 0 {
		t.Errorf("ClusterRoleBinding: %s %v", crb.Category, crb.Risks)
	}
}

// TestACacheDirectoryDriftCannotOwnIsRefused: a cache directory inside the
// repository previewed (as DRIFT_CACHE_DIR=$CI_PROJECT_DIR/.drift-cache once set it),
// or a symbolic link, ends the run with an error saying why, before anything is read
// from it.
func TestACacheDirectoryDriftCannotOwnIsRefused(t *testing.T) {
	r, _, headSHA := stateRepo(t, map[string]string{"app/cm.yaml": cmApp("blue")}, map[string]string{"app/cm.yaml": cmApp("green")})
	t.Setenv("DRIFT_CACHE_DIR", filepath.Join(r.Dir, ".drift-cache"))
	o := drift(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--ref", headSHA)
	if o.code != exitError || !strings.Contains(o.stderr, "is inside the repository being previewed") {
		t.Errorf("a cache inside the repository: exit %d\n%s", o.code, o.stderr)
	}
	link := filepath.Join(t.TempDir(), "cache")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DRIFT_CACHE_DIR", link)
	o = drift(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--ref", headSHA)
	if o.code != exitError || !strings.Contains(o.stderr, "is a symbolic link") {
		t.Errorf("a cache that is a link: exit %d\n%s", o.code, o.stderr)
	}
}

func targetNames(rep *report.Report) []string {
	var out []string
	for _, tg := range rep.Targets {
		out = append(out, tg.Name)
	}
	return out
}

// sha256Hex is the SHA-256 of s in hex, as drift names files after paths.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
