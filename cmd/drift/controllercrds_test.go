package main

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/drift-gitops/drift/internal/report"
)

// TestEphemeralServersServeTheControllersKinds: a repository installed by flux-operator
// holds a FluxInstance, not Flux's CRDs. On --cluster ephemeral its Kustomizations and
// HelmReleases are checked against drift's copy of Flux's CRDs (a misspelled field is
// found, as the real cluster refuses it), each target says so, a kind of a controller
// the FluxInstance does not install stays unknown with why, and --crds-from-context's
// CRDs win over drift's.
func TestEphemeralServersServeTheControllersKinds(t *testing.T) {
	instance := func(version string) string {
		return "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec:\n" +
			"  distribution: {version: \"" + version + "\", registry: ghcr.io/fluxcd}\n" +
			"  components: [source-controller, kustomize-controller, helm-controller]\n" +
			"  sync: {kind: GitRepository, url: \"" + fluxRemote + "\", ref: refs/heads/main, path: clusters/main/sync}\n"
	}
	apps := func(interval string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\n" +
			"spec: {interval: " + interval + ", path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
	}
	release := func(extra string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: podinfo}\n---\n" +
			"apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: podinfo, namespace: podinfo}\n" +
			"spec: {interval: 1h, url: \"https://stefanprodan.github.io/podinfo\"}\n---\n" +
			"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: podinfo}\n" +
			"spec:\n  suspend: true\n  interval: 10m\n" + extra +
			"  chart: {spec: {chart: podinfo, version: 6.x, sourceRef: {kind: HelmRepository, name: podinfo}}}\n"
	}
	r := repo(t, map[string]string{
		"clusters/main/flux-instance.yaml": instance("2.x"), "clusters/main/sync/apps.yaml": apps("10m"), "apps/release.yaml": release(""),
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	commit := func(files map[string]string) {
		t.Helper()
		if _, err := r.CommitFiles(files, "change"); err != nil {
			t.Fatal(err)
		}
	}
	preview := func(extra ...string) (*report.Report, outcome) {
		t.Helper()
		return driftJSON(t, append([]string{"diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "main~1", "--ref", "main", "--path", "clusters/main"}, extra...)...)
	}
	notes := func(rep *report.Report) string {
		var all []string
		for _, tg := range rep.Targets {
			all = append(all, tg.Notes...)
		}
		return strings.Join(all, "\n")
	}

	// A misspelled field of a HelmRelease is refused by Flux's schema, and the changed
	// Kustomization is previewed: neither is an unknown kind.
	commit(map[string]string{"clusters/main/sync/apps.yaml": apps("5m"), "apps/release.yaml": release("  intervall: 5m\n")})
	rep, o := preview()
	hr, ks := find(t, rep, "HelmRelease", "podinfo"), find(t, rep, "Kustomization", "apps")
	if o.code != exitError || hr.ErrorReason == "" || hr.ErrorReason == "unknown-kind" || !strings.Contains(hr.Error, "intervall") {
		t.Errorf("the misspelled field: exit %d, %s: %s\n%s", o.code, hr.ErrorReason, hr.Error, o.stderr)
	}
	if ks.Category != report.Modify || !strings.Contains(ks.Diff, "+  interval: 5m") {
		t.Errorf("the Kustomization: %s\n%s", ks.Category, ks.Diff)
	}
	if n := notes(rep); !strings.Contains(n, "serves HelmRelease, HelmRepository with drift's copy of Flux v2.9.5's CustomResourceDefinitions") ||
		!strings.Contains(n, `FluxInstance flux-system/flux installs "2.x"`) {
		t.Errorf("notes:\n%s", n)
	}

	// Spelled right, the change is complete (an addition: the base's misspelled
	// HelmRelease cannot be on the cluster); a FluxInstance asking for another release
	// is named with the release its objects were checked against.
	commit(map[string]string{"apps/release.yaml": release("  timeout: 5m\n"), "clusters/main/flux-instance.yaml": instance("2.6.x")})
	rep, o = preview()
	if hr := find(t, rep, "HelmRelease", "podinfo"); o.code != exitChanges || !rep.Complete || hr.Category != report.Add {
		t.Errorf("spelled right: exit %d, %+v\n%s\n%s", o.code, hr, o.stdout, o.stderr)
	}
	if n := notes(rep); !strings.Contains(n, `FluxInstance flux-system/flux asks for "2.6.x", which v2.9.5 is not`) {
		t.Errorf("notes:\n%s", n)
	}

	// An ImagePolicy: the FluxInstance does not install image-reflector-controller.
	commit(map[string]string{"apps/policy.yaml": "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImagePolicy\nmetadata: {name: podinfo, namespace: podinfo}\n" +
		"spec: {imageRepositoryRef: {name: podinfo}, policy: {semver: {range: 6.x}}}\n"})
	rep, o = preview()
	if p := find(t, rep, "ImagePolicy", "podinfo"); o.code != exitError || p.ErrorReason != "unknown-kind" ||
		!strings.Contains(notes(rep), "does not serve ImagePolicy: FluxInstance flux-system/flux installs source-controller, kustomize-controller, helm-controller") {
		t.Errorf("the ImagePolicy: exit %d, %+v\n%s", o.code, p, notes(rep))
	}

	// The cluster's own CRDs (here with open schemas) win over drift's.
	commit(map[string]string{"apps/policy.yaml": "", "apps/release.yaml": release("  intervall: 5m\n")})
	installFluxCRDs(t)
	kc, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rep, o = preview("--crds-from-context", kc.CurrentContext)
	if hr := find(t, rep, "HelmRelease", "podinfo"); hr.ErrorReason != "" || strings.Contains(notes(rep), "serves HelmRelease") {
		t.Errorf("--crds-from-context: exit %d, %+v\n%s", o.code, hr, notes(rep))
	}
}
