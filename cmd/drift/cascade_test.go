package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// deletions are a target's deleted objects by kind/name, with the inventory that
// names each, and its kept objects with why.
func deletions(tg *report.Target) (deleted, kept map[string]string) {
	deleted, kept = map[string]string{}, map[string]string{}
	for _, o := range tg.Objects {
		if o.Category == report.Delete {
			deleted[o.Kind+"/"+o.Name] = o.Inventory
		}
	}
	for _, k := range tg.Kept {
		kept[k.Kind+"/"+k.Name] = k.Reason
	}
	return deleted, kept
}

// TestAKustomizationTheChangeRemovesDeletesWhatItApplied: a pull request removes two
// Flux Kustomizations that flux-system prunes. Deleting one deletes what its
// status.inventory lists and carries its labels, and through a Kustomization it
// holds, what that one lists, each named by the chain; an unlabelled object is kept,
// and so is everything of the Kustomization whose deletionPolicy is Orphan.
func TestAKustomizationTheChangeRemovesDeletesWhatItApplied(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	labels := func(owner string) string {
		return "{kustomize.toolkit.fluxcd.io/name: " + owner + ", kustomize.toolkit.fluxcd.io/namespace: flux-system}"
	}
	ks := func(name, owner, spec, entries string) string {
		return sub(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: `+name+`, namespace: flux-system, labels: `+labels(owner)+`}
spec: {interval: 10m, `+spec+`, sourceRef: {kind: GitRepository, name: flux-system}}
status: {inventory: {entries: [`+entries+`]}}
`, ns)
	}
	cm := func(name, owner string) string {
		meta := "{name: " + name + ", namespace: NS}"
		if owner != "" {
			meta = "{name: " + name + ", namespace: NS, labels: " + labels(owner) + "}"
		}
		return sub("apiVersion: v1\nkind: ConfigMap\nmetadata: "+meta+"\n", ns)
	}
	entry := func(ns, name, group, kind, v string) string {
		return "{id: " + ns + "_" + name + "_" + group + "_" + kind + ", v: " + v + "}"
	}
	short := strings.SplitN(ns, "-", 2)[0] // unique to the test, short enough for a label value
	root, legacy, child, orphan := short+"-root", short+"-legacy", short+"-child", short+"-orphan"
	apply(t, "kustomize-controller", strings.Join([]string{
		ks(root, "flux-system", "path: ./clusters/c, prune: true", entry("flux-system", legacy, "kustomize.toolkit.fluxcd.io", "Kustomization", "v1")+", "+
			entry("flux-system", orphan, "kustomize.toolkit.fluxcd.io", "Kustomization", "v1")),
		ks(legacy, root, "path: ./legacy, prune: true", entry(ns, "legacy-a", "", "ConfigMap", "v1")+", "+entry(ns, "legacy-b", "", "ConfigMap", "v1")+", "+
			entry("flux-system", child, "kustomize.toolkit.fluxcd.io", "Kustomization", "v1")),
		ks(child, legacy, "path: ./child, prune: false, deletionPolicy: Delete", entry(ns, "child-a", "", "ConfigMap", "v1")),
		ks(orphan, root, "path: ./orphan, prune: true, deletionPolicy: Orphan", entry(ns, "orphan-a", "", "ConfigMap", "v1")),
		cm("legacy-a", legacy), cm("legacy-b", ""), cm("child-a", child), cm("orphan-a", orphan),
	}, "---\n"))
	kustomization := func(name, p string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec: {interval: 10m, path: " + p + ", prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
	}
	r := fluxRepo(t, map[string]string{
		"flux/source.yaml":    fluxSource,
		"flux/root.yaml":      kustomization(root, "./clusters/c"),
		"clusters/c/a.yaml":   kustomization(legacy, "./legacy"),
		"clusters/c/b.yaml":   kustomization(orphan, "./orphan"),
		"clusters/c/cm.yaml":  cm("stays", ""),
		"legacy/cm.yaml":      cm("legacy-a", ""),
		"orphan/cm.yaml":      cm("orphan-a", ""),
		"clusters/README.md":  "clusters\n",
		"legacy/child/cm.yml": cm("child-a", ""),
	}, map[string]string{"clusters/c/a.yaml": "", "clusters/c/b.yaml": ""})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--target", "Kustomization/flux-system/"+root)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	tg := targetNamed(rep, "Kustomization/flux-system/"+root)
	deleted, kept := deletions(tg)
	for name, chain := range map[string]string{
		"Kustomization/" + legacy: "Kustomization flux-system/" + root + " status.inventory",
		"Kustomization/" + orphan: "Kustomization flux-system/" + root + " status.inventory",
		"ConfigMap/legacy-a":      "deleted with Kustomization flux-system/" + legacy + ", which Kustomization flux-system/" + root,
		"Kustomization/" + child:  "deleted with Kustomization flux-system/" + legacy,
		"ConfigMap/child-a":       "deleted with Kustomization flux-system/" + child + ", which Kustomization flux-system/" + legacy + " status.inventory: deleted with",
	} {
		if got, ok := deleted[name]; !ok || !strings.Contains(got, chain) {
			t.Errorf("%s: deleted %v by %q, want a deletion by %q", name, ok, got, chain)
		}
	}
	if len(deleted) != 5 {
		t.Errorf("deleted %v", deleted)
	}
	if why := kept["ConfigMap/legacy-b"]; !strings.Contains(why, "labels do not name") {
		t.Errorf("legacy-b: kept for %q", why)
	}
	if why := kept["ConfigMap/orphan-a"]; !strings.Contains(why, "deletionPolicy is Orphan") {
		t.Errorf("orphan-a: kept for %q", why)
	}
}

// TestAnApplicationTheChangeRemovesDeletesItsResourcesWithItsFinalizer: the root
// Application prunes two Applications the change removes. The one with Argo CD's
// resources finalizer deletes the resources it tracks (but one marked Delete=false);
// the one without orphans them, which the report lists as kept with why.
func TestAnApplicationTheChangeRemovesDeletesItsResourcesWithItsFinalizer(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "argocd-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, "kubectl", string(data))
	if out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "wait", "--for", "condition=established", "--timeout", "30s",
		"crd/applications.argoproj.io").CombinedOutput(); err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
	ns := namespace(t)
	root, withF, without := ns+"-root", ns+"-with", ns+"-without"
	tracked := func(app, kind, name string) string {
		return "{argocd.argoproj.io/tracking-id: '" + app + ":/" + kind + ":" + ns + "/" + name + "'"
	}
	app := func(name, finalizers, resources string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ` + name + `
  namespace: argocd
  finalizers: [` + finalizers + `]
  annotations: {argocd.argoproj.io/tracking-id: '` + root + `:argoproj.io/Application:argocd/` + name + `'}
spec: {project: default, destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}}
status: {resources: [` + resources + `]}
`
	}
	res := func(name string) string {
		return "{version: v1, kind: ConfigMap, namespace: " + ns + ", name: " + name + "}"
	}
	apply(t, "argocd-controller", strings.Join([]string{
		app(withF, argoResourcesFinalizerForTest, res("app-a")+", "+res("app-b")),
		app(without, "", res("app-c")),
		`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + root + `, namespace: argocd}
spec: {project: default, syncPolicy: {automated: {prune: true}}}
status:
  resources:
  - {group: argoproj.io, version: v1alpha1, kind: Application, namespace: argocd, name: ` + withF + `}
  - {group: argoproj.io, version: v1alpha1, kind: Application, namespace: argocd, name: ` + without + `}
`,
		sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-a, namespace: NS, annotations: "+tracked(withF, "ConfigMap", "app-a")+"}}\n", ns),
		sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-b, namespace: NS, annotations: "+tracked(withF, "ConfigMap", "app-b")+", argocd.argoproj.io/sync-options: Delete=false}}\n", ns),
		sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-c, namespace: NS, annotations: "+tracked(without, "ConfigMap", "app-c")+"}}\n", ns),
	}, "---\n"))
	child := func(name string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + ", namespace: argocd}\n" +
			"spec: {project: default, source: {repoURL: " + fluxRemote + ", path: apps, targetRevision: HEAD}, destination: {server: https://kubernetes.default.svc, namespace: " + ns + "}}\n"
	}
	r := fluxRepo(t, map[string]string{
		"root.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + root + ", namespace: argocd}\n" +
			"spec: {project: default, source: {repoURL: " + fluxRemote + ", path: children, targetRevision: HEAD}, destination: {server: https://kubernetes.default.svc, namespace: argocd}, syncPolicy: {automated: {prune: true}}}\n",
		"children/a.yaml": child(withF), "children/b.yaml": child(without), "children/keep.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep, namespace: NS}\n", ns),
		"apps/cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-x, namespace: NS}\n", ns),
	}, map[string]string{"README.md": "x\n"})
	if _, err := r.Git("rm", "-q", "children/a.yaml", "children/b.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("commit", "-q", "-m", "remove the children"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--target", "Application/"+root)
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	deleted, kept := deletions(targetNamed(rep, "Application/"+root))
	if got := deleted["ConfigMap/app-a"]; !strings.Contains(got, "deleted with Application argocd/"+withF) {
		t.Errorf("app-a: deleted by %q (all: %v)", got, deleted)
	}
	if _, ok := deleted["Application/"+withF]; !ok || len(deleted) != 3 {
		t.Errorf("deleted: %v", deleted)
	}
	if why := kept["ConfigMap/app-b"]; !strings.Contains(why, "Delete=false") {
		t.Errorf("app-b kept for %q", why)
	}
	if why := kept["ConfigMap/app-c"]; !strings.Contains(why, "orphans its resources") {
		t.Errorf("app-c kept for %q", why)
	}
}

const argoResourcesFinalizerForTest = "resources-finalizer.argocd.argoproj.io"

// TestInputsOnlyTheClusterHoldsAreReadFromIt: a Kustomization's substituteFrom names
// the cluster-vars ConfigMap bootstrap made, and a HelmRelease's valuesFrom a Secret
// made by hand: neither is in the repository. drift reads them from the live cluster
// (the Secret's value scrubbed); on an ephemeral server it cannot, and says which
// object is missing; an optional one is noted.
func TestInputsOnlyTheClusterHoldsAreReadFromIt(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	apply(t, "kubectl", sub(`apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-vars, namespace: NS}
data: {domain: live.example.com}
---
apiVersion: v1
kind: Secret
metadata: {name: web-values, namespace: NS}
stringData: {values.yaml: "token: live-only-secret-token\n"}
`, ns))
	r := repo(t, map[string]string{
		"flux/source.yaml": fluxSource,
		"flux/apps.yaml": sub(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: NS}
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  postBuild:
    substituteFrom:
    - {kind: ConfigMap, name: cluster-vars}
    - {kind: ConfigMap, name: not-anywhere, optional: true}
`, ns),
		"flux/web.yaml":                  sub(exfilRelease+"  valuesFrom:\n  - {kind: Secret, name: web-values}\n", ns),
		"apps/cm.yaml":                   sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: host, namespace: NS}\ndata: {host: 'web.${domain}'}\n", ns),
		"charts/exfil/Chart.yaml":        "apiVersion: v2\nname: exfil\nversion: 1.0.0\n",
		"charts/exfil/templates/cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: NS}\ndata: {token: {{ .Values.token | quote }}}\n", ns),
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if host := find(t, rep, "ConfigMap", "host"); !strings.Contains(host.Diff, "host: web.live.example.com") {
		t.Errorf("the substitution from the live cluster-vars:\n%s", host.Diff)
	}
	if web := find(t, rep, "ConfigMap", "web"); !strings.Contains(web.Diff, "token: '***'") {
		t.Errorf("the live Secret's value:\n%s", web.Diff)
	}
	if strings.Contains(o.stdout+o.stderr, "live-only-secret-token") {
		t.Error("the live Secret's value is in the output")
	}
	if apps := targetNamed(rep, "Kustomization/"+ns+"/apps"); apps == nil || !strings.Contains(strings.Join(apps.Notes, "\n"), "not-anywhere") {
		t.Errorf("the optional ConfigMap found nowhere is not noted: %+v", apps)
	}

	// On an ephemeral server there is no cluster to read: the targets say what is missing.
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--cluster", "ephemeral")
	if o.code != exitError {
		t.Fatalf("ephemeral: exit %d, want 2\n%s", o.code, o.stderr)
	}
	apps := targetNamed(rep, "Kustomization/"+ns+"/apps")
	if apps == nil || len(apps.Objects) == 0 || !strings.Contains(apps.Objects[0].Error, "ConfigMap "+ns+"/cluster-vars, which the repository does not hold and drift cannot read from the cluster") {
		t.Errorf("ephemeral: %+v", apps)
	}
}

// TestASourceOnlyTheClusterHoldsIsReadFromIt is a Flux Operator repository's layout:
// the flux-system GitRepository is made in the cluster (by a FluxInstance), not in git.
// Against the live cluster drift reads it there and matches its URL to this
// repository; on an ephemeral server drift.yaml's fluxSources names it.
func TestASourceOnlyTheClusterHoldsIsReadFromIt(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	apply(t, "flux-operator", strings.ReplaceAll(fluxSource, "name: flux-system, namespace: flux-system", "name: "+ns+"-sync, namespace: flux-system"))
	ks := sub(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: flux-system}
spec:
  interval: 1h
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: NS-sync, namespace: flux-system}
`, ns)
	r := repo(t, map[string]string{
		"flux/cluster/ks.yaml": ks,
		"apps/cm.yaml":         sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: NS}\n", ns),
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if tg := targetNamed(rep, "Kustomization/flux-system/cluster-apps"); tg == nil || tg.Skipped != "" || len(tg.Objects) != 1 || tg.Objects[0].Name != "app" {
		t.Errorf("cluster-apps: %+v", tg)
	}

	// Ephemeral: no cluster to read; drift.yaml names the source.
	rep, _ = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--cluster", "ephemeral")
	if tg := targetNamed(rep, "Kustomization/flux-system/cluster-apps"); tg == nil || !strings.Contains(tg.Skipped, "fluxSources") {
		t.Errorf("ephemeral without fluxSources: %+v", tg)
	}
	if _, err := r.CommitFiles(map[string]string{"drift.yaml": "discover: true\nfluxSources:\n- apiVersion: source.toolkit.fluxcd.io/v1\n  kind: GitRepository\n  metadata: {name: " + ns + "-sync}\n  spec: {url: " + fluxRemote + ", ref: {branch: main}}\n"}, "name the source"); err != nil {
		t.Fatal(err)
	}
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--cluster", "ephemeral")
	if tg := targetNamed(rep, "Kustomization/flux-system/cluster-apps"); tg == nil || tg.Skipped != "" || len(tg.Objects) != 1 {
		t.Errorf("ephemeral with fluxSources: %+v\n%s", tg, o.stderr)
	}
}
