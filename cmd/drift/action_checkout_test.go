package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

// actionsCheckout reproduces what actions/checkout leaves for a pull request: the
// merge commit refs/pull/1/merge of head into main, fetched one commit deep and
// checked out detached, origin pointing at GitHub, and the base fetched by SHA as
// the Action's run step fetches it. It returns the checkout's directory and the base
// commit; the environment GitHub sets for the pull_request event is set for the test.
func actionsCheckout(t *testing.T, base, change map[string]string) (dir, baseSHA string) {
	t.Helper()
	origin, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if baseSHA, err = origin.CommitFiles(base, "base"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"checkout", "-q", "-b", "feature"}} {
		if _, err := origin.Git(args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := origin.CommitFiles(change, "the change"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"checkout", "-q", "main"}, {"checkout", "-q", "-b", "merge"},
		{"merge", "-q", "--no-ff", "-m", "Merge feature into main", "feature"},
		{"update-ref", "refs/pull/1/merge", "HEAD"}, {"checkout", "-q", "main"}, {"branch", "-q", "-D", "merge"},
		{"config", "uploadpack.allowAnySHA1InWant", "true"},
	} {
		if out, err := origin.Git(args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	merge, err := origin.Git("rev-parse", "refs/pull/1/merge")
	if err != nil {
		t.Fatal(err)
	}
	merge = strings.TrimSpace(merge)
	dir = t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// As actions/checkout@v4 runs it for a pull_request event.
	git("init", "-q")
	git("remote", "add", "origin", "file://"+origin.Dir)
	git("-c", "protocol.version=2", "fetch", "--no-tags", "--prune", "--no-recurse-submodules", "--depth=1", "origin", "+"+merge+":refs/remotes/pull/1/merge")
	git("checkout", "-q", "--force", "refs/remotes/pull/1/merge")
	// As hack/action/run.sh fetches a base the checkout lacks.
	git("fetch", "--quiet", "--no-tags", "--depth=1", "origin", baseSHA)
	git("remote", "set-url", "origin", fluxRemote)
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature",
		"GITHUB_REF": "refs/pull/1/merge", "GITHUB_REF_NAME": "1/merge", "GITHUB_REF_TYPE": "branch", "GITHUB_SHA": merge,
	} {
		t.Setenv(k, v)
	}
	return dir, baseSHA
}

// TestTheActionsCheckoutPreviewsSourcesThatFollowTheBaseBranch is the Action as it
// runs: a detached merge commit one commit deep, the base fetched by SHA, GitHub's
// environment. An Argo CD Application following main, a Flux Kustomization and a
// HelmRelease whose GitRepository follows main each preview the change they deploy
// once merged into main; none is skipped for following a branch.
func TestTheActionsCheckoutPreviewsSourcesThatFollowTheBaseBranch(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	cm := func(name, value string) string {
		return sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: NS}\ndata: {v: '"+value+"'}\n", ns)
	}
	apply(t, "kubectl", cm("guestbook", "blue")+"---\n"+cm("apps", "blue"))
	base := map[string]string{
		"argo/guestbook.yaml": sub(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: guestbook, namespace: argocd}
spec:
  project: default
  source: {repoURL: `+fluxRemote+`, path: guestbook, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NS}
`, ns),
		"guestbook/cm.yaml": cm("guestbook", "blue"),
		"flux/source.yaml":  fluxSource,
		"flux/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`,
		"apps/cm.yaml":                 cm("apps", "blue"),
		"flux/web.yaml":                sub(strings.ReplaceAll(strings.ReplaceAll(exfilRelease, "exfil", "web"), "./charts/web", "./charts/web"), ns),
		"charts/web/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"charts/web/templates/cm.yaml": cm("web", "blue"),
	}
	dir, baseSHA := actionsCheckout(t, base, map[string]string{
		"guestbook/cm.yaml":            cm("guestbook", "green"),
		"apps/cm.yaml":                 cm("apps", "green"),
		"charts/web/templates/cm.yaml": cm("web", "green"),
	})
	rep, o := driftJSON(t, "diff", "--repo", dir, "--ref", "HEAD", "--base", baseSHA)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for _, want := range []struct{ target, object, category string }{
		{"Application/guestbook", "guestbook", "modify"}, {"Kustomization/flux-system/apps", "apps", "modify"}, {"HelmRelease/" + ns + "/web", "web", "modify"},
	} {
		tg := targetNamed(rep, want.target)
		if tg == nil || tg.Skipped != "" {
			t.Errorf("%s: %+v", want.target, tg)
			continue
		}
		found := false
		for _, obj := range tg.Objects {
			if obj.Kind == "ConfigMap" && obj.Name == want.object {
				found = obj.Category == want.category && strings.Contains(obj.Diff, "v: green")
			}
		}
		if !found {
			t.Errorf("%s does not show its ConfigMap turning green: %+v", want.target, tg.Objects)
		}
	}

	// Outside Actions the same checkout knows no branch: --branch says it.
	t.Setenv("GITHUB_ACTIONS", "")
	rep, _ = driftJSON(t, "diff", "--repo", dir, "--ref", "HEAD", "--base", baseSHA)
	if tg := targetNamed(rep, "Application/guestbook"); tg == nil || !strings.Contains(tg.Skipped, "follows revision main") {
		t.Errorf("without GitHub's environment: %+v", tg)
	}
	rep, o = driftJSON(t, "diff", "--repo", dir, "--ref", "HEAD", "--base", baseSHA, "--branch", "main")
	if tg := targetNamed(rep, "Application/guestbook"); o.code != exitChanges || tg == nil || tg.Skipped != "" {
		t.Errorf("--branch main: exit %d, %+v", o.code, tg)
	}
}

// TestDriftTargetsOnAFeatureBranchPreviewsWhatFollowsTheDefaultBranch: a local run on a
// feature branch previews what a merge into the default branch deploys, so sources
// following main are targets, not skipped.
func TestDriftTargetsOnAFeatureBranchPreviewsWhatFollowsTheDefaultBranch(t *testing.T) {
	r := repo(t, map[string]string{
		"argo/guestbook.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: guestbook, namespace: argocd}\n" +
			"spec:\n  source: {repoURL: " + fluxRemote + ", path: guestbook, targetRevision: main}\n  destination: {server: https://kubernetes.default.svc, namespace: gb}\n",
		"guestbook/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gb}\n",
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("checkout", "-q", "-b", "feature"); err != nil {
		t.Fatal(err)
	}
	o := drift(t, "targets", "--repo", r.Dir, "-o", "json")
	if o.code != 0 || strings.Contains(o.stdout, "follows") || !strings.Contains(o.stdout, `"name": "Application/guestbook"`) {
		t.Errorf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
}
