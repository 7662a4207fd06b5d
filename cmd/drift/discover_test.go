package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report"
)

// discoveredRepo commits the test repository testdata/<dir> on main, known by the
// remote URL url.
func discoveredRepo(t *testing.T, dir, url string) *gitfixture.Repo {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitTree(filepath.Join("..", "..", "testdata", dir), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("remote", "add", "origin", url); err != nil {
		t.Fatal(err)
	}
	return r
}

func targetNamed(rep *report.Report, name string) *report.Target {
	for i := range rep.Targets {
		if rep.Targets[i].Name == name {
			return &rep.Targets[i]
		}
	}
	return nil
}

// The user: an Argo CD repository without drift.yaml, a ConfigMap under an
// Application's path changed from blue to green. drift finds the Application through
// the root Application's chart, previews exactly that target, and shows the change.
func TestAnArgoCDRepositoryIsPreviewedWithoutDriftYAML(t *testing.T) {
	r := discoveredRepo(t, "argocd", "https://github.com/example/gitops.git")
	// As Argo CD synced the base: kubectl apply (client-side) as argocd-controller,
	// with its tracking annotation. The Service was never synced: drift, not change.
	cmd := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "apply", "--field-manager", "argocd-controller", "-f", "-")
	cmd.Stdin = strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: guestbook}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook-ui\n  namespace: guestbook\n" +
		"  annotations: {argocd.argoproj.io/tracking-id: 'guestbook:/ConfigMap:guestbook/guestbook-ui'}\ndata: {color: blue}\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	if _, err := r.Git("checkout", "-q", "-b", "green"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"guestbook/guestbook-ui.yaml": strings.Replace(readTestdata(t, "argocd/guestbook/guestbook-ui.yaml"), "color: blue", "color: green", 1)}, "green"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "--base", "main")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	gb := targetNamed(rep, "Application/guestbook")
	if gb == nil || gb.Skipped != "" || gb.Path != "guestbook" || gb.Applier != "argocd" {
		t.Fatalf("Application/guestbook: %+v", gb)
	}
	cats := map[string]string{}
	for _, obj := range gb.Objects {
		cats[obj.Kind+"/"+obj.Name] = obj.Category
	}
	if cats["ConfigMap/guestbook-ui"] != "modify" || cats["Service/guestbook-ui"] != "unchanged" || cats["Namespace/guestbook"] != "unchanged" || len(cats) != 3 {
		t.Errorf("guestbook objects: %v", cats)
	}
	if len(gb.Drift) != 1 || gb.Drift[0].Kind != "Service" || gb.Drift[0].Category != "add" {
		t.Errorf("the Service Argo CD never synced is not drift: %+v", gb.Drift)
	}
	for _, obj := range gb.Objects {
		if len(obj.Warnings) > 0 && obj.Kind != "Namespace" {
			t.Errorf("%s %s: warnings %+v", obj.Kind, obj.Name, obj.Warnings)
		}
	}
	for _, tg := range rep.Targets {
		if tg.Name != "Application/guestbook" && !strings.HasPrefix(tg.Skipped, "its inputs are unchanged") && tg.Skipped == "" {
			t.Errorf("%s was previewed, yet its inputs did not change", tg.Name)
		}
	}
	if cm := find(t, rep, "ConfigMap", "guestbook-ui"); !strings.Contains(cm.Diff, "-  color: blue") || !strings.Contains(cm.Diff, "+  color: green") {
		t.Errorf("diff:\n%s", cm.Diff)
	}
}

// drift targets lists what discovery found, where each is defined and why some are
// not previewed.
func TestDriftTargetsListsDiscoveredTargets(t *testing.T) {
	argo := discoveredRepo(t, "argocd", "git@github.com:example/gitops.git")
	o := drift(t, "targets", "--repo", argo.Dir)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	golden.Check(t, "targets-argocd.txt", []byte(o.stdout))
	flux := discoveredRepo(t, "flux", "ssh://git@github.com/example/fleet")
	o = drift(t, "targets", "--repo", flux.Dir, "--path", "clusters/staging")
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	golden.Check(t, "targets-flux-staging.txt", []byte(o.stdout))
}

// readTestdata reads a file of the module's testdata/.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// installFluxCRDs gives the test API server Flux's kinds, as a cluster with Flux has.
func installFluxCRDs(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "flux-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, "kubectl", string(data))
	out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "wait", "--for", "condition=established", "--timeout", "30s",
		"crd/kustomizations.kustomize.toolkit.fluxcd.io", "crd/gitrepositories.source.toolkit.fluxcd.io",
		"crd/helmrepositories.source.toolkit.fluxcd.io", "crd/helmreleases.helm.toolkit.fluxcd.io").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
}

// A Flux repository without drift.yaml, previewed one cluster's directory at a time:
// the Kustomizations built as kustomize-controller builds them, with postBuild
// substitution (a Secret's value among the variables, never shown), the HelmRelease's
// chart with its values, and the chart from a Helm repository said to be skipped.
func TestAFluxClusterDirectoryIsPreviewedWithoutDriftYAML(t *testing.T) {
	installFluxCRDs(t)
	r := discoveredRepo(t, "flux", "ssh://git@github.com/example/fleet")
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--path", "clusters/staging")
	// The redis chart's repository is not allowed without drift.yaml: an error, not a
	// silent gap.
	if o.code != exitError {
		t.Fatalf("exit %d, want 2\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if strings.Contains(o.stdout, "s3cr3t-t0ken-value") || strings.Contains(o.stderr, "s3cr3t-t0ken-value") {
		t.Error("a substituteFrom Secret's value is in the output")
	}
	var names []string
	for _, tg := range rep.Targets {
		names = append(names, tg.Name)
	}
	if strings.Join(names, " ") != "HelmRelease/podinfo/podinfo HelmRelease/podinfo/redis Kustomization/flux-system/apps Kustomization/flux-system/flux-system Kustomization/flux-system/infra-configs" {
		t.Errorf("targets: %v", names)
	}
	apps := targetNamed(rep, "Kustomization/flux-system/apps")
	var host *report.Object
	for i := range apps.Objects {
		if apps.Objects[i].Name == "podinfo-host" {
			host = &apps.Objects[i]
		}
	}
	if host == nil || host.Category != "add" {
		t.Fatalf("podinfo-host: %+v\n%s", host, o.stdout)
	}
	for _, want := range []string{"host: podinfo.staging.example.com", "env: staging", "owner: platform", "literal: ${not_a_var}", "token: '***'"} {
		if !strings.Contains(host.Diff, want) {
			t.Errorf("podinfo-host lacks %q:\n%+v", want, *host)
		}
	}
	pod := targetNamed(rep, "HelmRelease/podinfo/podinfo")
	if pod == nil || pod.Applier != "helm" || len(pod.Objects) != 1 || !strings.Contains(pod.Objects[0].Diff, "color: '#34577c'") || !strings.Contains(pod.Objects[0].Diff, `replicas: "2"`) {
		t.Errorf("HelmRelease podinfo: %+v", pod)
	}
	if redis := targetNamed(rep, "HelmRelease/podinfo/redis"); redis == nil || len(redis.Objects) != 1 || redis.Objects[0].ErrorReason != "chart-unavailable" ||
		!strings.Contains(redis.Objects[0].Error, "chart redis 18.1.2 from https://charts.example.com/bitnami") || !strings.Contains(redis.Objects[0].Error, "charts.allow") {
		t.Errorf("HelmRelease redis: %+v", redis)
	}
	for _, tg := range rep.Targets {
		for _, obj := range tg.Objects {
			if obj.Category == "error" && tg.Name != "HelmRelease/podinfo/redis" {
				t.Errorf("%s: %s %s: %s", tg.Name, obj.Kind, obj.Name, obj.Error)
			}
		}
	}
}

// A Kustomization's status.inventory is its inventory: what it lists, the change no
// longer renders, and carries the Kustomization's labels is deleted (spec.prune:
// true); what lacks them is kept, as Flux keeps it.
func TestAFluxKustomizationPrunesWhatItsInventoryListsAndNoLongerRenders(t *testing.T) {
	installFluxCRDs(t)
	apply(t, "kustomize-controller", `apiVersion: v1
kind: ConfigMap
metadata:
  name: retired-limits
  namespace: default
  labels: {kustomize.toolkit.fluxcd.io/name: infra-configs, kustomize.toolkit.fluxcd.io/namespace: flux-system}
data: {cpu: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hand-made, namespace: default}
data: {cpu: "1"}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra-configs, namespace: flux-system}
spec: {path: ./infrastructure/configs, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
status:
  inventory:
    entries:
    - {id: default_platform-limits__ConfigMap, v: v1}
    - {id: default_retired-limits__ConfigMap, v: v1}
    - {id: default_hand-made__ConfigMap, v: v1}
`)
	r := discoveredRepo(t, "flux", "ssh://git@github.com/example/fleet")
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--path", "clusters/staging", "--target", "Kustomization/flux-system/infra-configs")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	infra := targetNamed(rep, "Kustomization/flux-system/infra-configs")
	cats := map[string]string{}
	for _, obj := range infra.Objects {
		cats[obj.Kind+"/"+obj.Name] = obj.Category
	}
	if cats["ConfigMap/retired-limits"] != "delete" || cats["ConfigMap/hand-made"] != "" || cats["ConfigMap/platform-limits"] != "add" {
		t.Errorf("objects: %v", cats)
	}
	if len(infra.Kept) != 1 || infra.Kept[0].Name != "hand-made" || !strings.Contains(infra.Kept[0].Reason, "Flux leaves it") {
		t.Errorf("kept: %+v", infra.Kept)
	}
}

// An Application's status.resources is its inventory: the root Application prunes
// automatically, so an Application it tracks and no longer renders is deleted; one
// without its tracking is kept.
func TestAnArgoCDApplicationPrunesWhatItsStatusListsAndNoLongerRenders(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "argocd-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, "kubectl", string(data))
	if out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "wait", "--for", "condition=established", "--timeout", "30s",
		"crd/applications.argoproj.io").CombinedOutput(); err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
	apply(t, "argocd-controller", `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: retired
  namespace: argocd
  annotations: {argocd.argoproj.io/tracking-id: 'root:argoproj.io/Application:argocd/retired'}
spec: {project: default}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: by-hand, namespace: argocd}
spec: {project: default}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec: {project: default, syncPolicy: {automated: {prune: true}}}
status:
  resources:
  - {group: argoproj.io, version: v1alpha1, kind: Application, namespace: argocd, name: guestbook}
  - {group: argoproj.io, version: v1alpha1, kind: Application, namespace: argocd, name: retired}
  - {group: argoproj.io, version: v1alpha1, kind: Application, namespace: argocd, name: by-hand}
`)
	r := discoveredRepo(t, "argocd", "https://github.com/example/gitops.git")
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--target", "Application/root")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	root := targetNamed(rep, "Application/root")
	cats := map[string]string{}
	for _, obj := range root.Objects {
		cats[obj.Kind+"/"+obj.Name] = obj.Category
	}
	if cats["Application/retired"] != "delete" || cats["Application/by-hand"] != "" || cats["Application/guestbook"] != "add" {
		t.Errorf("objects: %v", cats)
	}
	if len(root.Kept) != 1 || root.Kept[0].Name != "by-hand" || !strings.Contains(root.Kept[0].Reason, "tracking") {
		t.Errorf("kept: %+v", root.Kept)
	}
}

// A pull request that edits a HelmRelease's valuesFrom ConfigMap: --base selects the
// Kustomization that applies the ConfigMap and the HelmRelease whose values change,
// nothing else, and the HelmRelease reports the chart's object that changes.
func TestAHelmReleaseValuesChangeSelectsExactlyItsTargets(t *testing.T) {
	installFluxCRDs(t)
	apply(t, "kustomize-controller", "apiVersion: v1\nkind: Namespace\nmetadata: {name: podinfo}\n")
	r := discoveredRepo(t, "flux", "ssh://git@github.com/example/fleet")
	if _, err := r.Git("checkout", "-q", "-b", "color"); err != nil {
		t.Fatal(err)
	}
	values := strings.Replace(readTestdata(t, "flux/apps/staging/podinfo-values.yaml"), "#34577c", "#ff0000", 1)
	if _, err := r.CommitFiles(map[string]string{"apps/staging/podinfo-values.yaml": values}, "red"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--path", "clusters/staging", "--ref", "HEAD", "--base", "main")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	var selected []string
	for _, tg := range rep.Targets {
		if tg.Skipped == "" {
			selected = append(selected, tg.Name)
		}
	}
	if strings.Join(selected, " ") != "HelmRelease/podinfo/podinfo Kustomization/flux-system/apps" {
		t.Errorf("selected: %v", selected)
	}
	pod := targetNamed(rep, "HelmRelease/podinfo/podinfo")
	if len(pod.Objects) != 1 || pod.Objects[0].Category != "modify" || !strings.Contains(pod.Objects[0].Diff, "-  color: '#34577c'") ||
		!strings.Contains(pod.Objects[0].Diff, "+  color: '#ff0000'") {
		t.Errorf("HelmRelease podinfo: %s %s", pod.Objects[0].Category, pod.Objects[0].Diff)
	}
}
