package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// coverageFleet is a Flux repository as bootstrap lays it out: a cluster directory
// whose flux-system Kustomization applies it, one app built with kustomize, and
// beside them documentation, CI workflows and an overlay no Kustomization points at.
func coverageFleet() map[string]string {
	return map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n" +
			"spec: {interval: 1m, url: 'https://git.example/fleet', ref: {branch: main}}\n---\n" +
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./clusters/prod, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"clusters/prod/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./apps/web, prune: true, targetNamespace: default, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"apps/web/kustomization.yaml":       "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [cm.yaml, old.yaml]\n",
		"apps/web/cm.yaml":                  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-coverage}\ndata: {color: blue}\n",
		"apps/web/old.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-coverage-old}\ndata: {a: b}\n",
		"README.md":                         "# fleet\n",
		"docs/mkdocs.yml":                   "site_name: fleet\nnav: [index.md]\n",
		".github/workflows/ci.yaml":         "name: ci\non: [pull_request]\njobs: {lint: {runs-on: ubuntu-latest, steps: [{run: make lint}]}}\n",
		"overlays/extra/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [role.yaml]\n",
		"overlays/extra/role.yaml":          "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: extra}\nrules: []\n",
		".sourceignore":                     "/tools/\n",
		"tools/lint.yaml":                   "apiVersion: lint.example/v1\nkind: Config\nstrict: true\n",
	}
}

// coveredFile is the coverage of path in rep (nil: not listed).
func coveredFile(rep *report.Report, path string) *report.CoveredFile {
	if rep.Coverage == nil {
		return nil
	}
	for i := range rep.Coverage.Files {
		if rep.Coverage.Files[i].Path == path {
			return &rep.Coverage.Files[i]
		}
	}
	return nil
}

// TestEveryFileTheChangeTouchesIsAccountedFor runs pull requests as the Action runs
// them (the detached merge commit, the base by SHA) on a Flux fleet, and checks
// that every file each touches is in the coverage: a documentation and CI change
// deploys nothing (exit 0, complete); a change to an overlay no Kustomization reads
// is read by nothing (exit 2, incomplete, the file named first), beside an app's
// change previewed by its Kustomization; a removed and a renamed file of the app are
// previewed (the removed one read by the base's render); drift targets --base gives
// the same accounting.
func TestEveryFileTheChangeTouchesIsAccountedFor(t *testing.T) {
	// Documentation, CI, a YAML that is no object, and a tool's configuration that
	// looks like one but that Flux's .sourceignore leaves out: nothing deployed.
	dir, baseSHA := actionsCheckout(t, coverageFleet(), map[string]string{
		"tools/lint.yaml":           "apiVersion: lint.example/v1\nkind: Config\nstrict: false\n",
		"README.md":                 "# the fleet\n",
		"docs/mkdocs.yml":           "site_name: the fleet\nnav: [index.md]\n",
		".github/workflows/ci.yaml": "name: ci\non: [pull_request, push]\njobs: {lint: {runs-on: ubuntu-latest, steps: [{run: make lint}]}}\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", dir, "--base", baseSHA, "--ref", "HEAD")
	if o.code != 0 || !rep.Complete || rep.Summary.Error != 0 || rep.Coverage == nil || len(rep.Coverage.Files) != 4 {
		t.Fatalf("a documentation change: exit %d, complete %v, coverage %+v\n%s", o.code, rep.Complete, rep.Coverage, o.stderr)
	}
	for _, f := range rep.Coverage.Files {
		if f.Status != report.CoverageNotDeployed || f.Incomplete {
			t.Errorf("%s: %s (%s), want not-deployed", f.Path, f.Status, f.Why)
		}
	}
	if f := coveredFile(rep, "tools/lint.yaml"); f == nil || !strings.Contains(f.Why, "source-controller leaves it out") {
		t.Errorf("tools/lint.yaml: %+v, want left out by Flux's source ignore rules", f)
	}

	// An overlay nothing reads, beside an app's change, a removed and a renamed file.
	dir, baseSHA = actionsCheckout(t, coverageFleet(), map[string]string{
		"overlays/extra/role.yaml":    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: extra}\nrules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n",
		"apps/web/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [configmap.yaml]\n",
		"apps/web/old.yaml":           "",
		"apps/web/cm.yaml":            "",
		"apps/web/configmap.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-coverage}\ndata: {color: blue}\n",
	})
	rep, o = driftJSON(t, "diff", "--repo", dir, "--base", baseSHA, "--ref", "HEAD")
	role := coveredFile(rep, "overlays/extra/role.yaml")
	if o.code != exitError || rep.Complete || rep.Summary.NotCovered != 1 || role == nil || role.Status != report.CoverageReadByNothing || !role.Incomplete {
		t.Fatalf("an overlay nothing reads: exit %d, complete %v, summary %+v, coverage %+v\n%s", o.code, rep.Complete, rep.Summary, rep.Coverage, o.stderr)
	}
	const app = "Kustomization/flux-system/apps"
	for path, want := range map[string]report.CoveredFile{
		"apps/web/kustomization.yaml": {Status: report.CoveragePreviewed},
		"apps/web/old.yaml":           {Status: report.CoveragePreviewed, Removed: true},
		"apps/web/configmap.yaml":     {Status: report.CoveragePreviewed, RenamedFrom: "apps/web/cm.yaml"},
	} {
		f := coveredFile(rep, path)
		if f == nil || f.Status != want.Status || f.Removed != want.Removed || f.RenamedFrom != want.RenamedFrom ||
			len(f.Targets) != 1 || f.Targets[0].Name != app || !f.Targets[0].Previewed {
			t.Errorf("%s: %+v, want %s by %s", path, f, want.Status, app)
		}
	}
	if coveredFile(rep, "apps/web/cm.yaml") != nil {
		t.Error("the renamed file is listed under its old path too")
	}
	text := drift(t, "diff", "--repo", dir, "--base", baseSHA, "--ref", "HEAD").stdout
	lines := strings.Split(text, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "The report is incomplete:") || !strings.Contains(lines[1], "overlays/extra/role.yaml") ||
		!strings.Contains(text, "  Read by nothing (1):\n    overlays/extra/role.yaml: no target drift found reads it") {
		t.Errorf("the text report does not say first that it is incomplete, naming the file, and list it:\n%s", text)
	}
	md := drift(t, "diff", "--repo", dir, "--base", baseSHA, "--ref", "HEAD", "-o", "markdown").stdout
	if !strings.HasPrefix(md, "### drift: 1 changed file read by nothing\n") {
		t.Errorf("the markdown title does not say a file is read by nothing:\n%s", md)
	}

	// drift targets --base: the same accounting, without a cluster.
	out := drift(t, "targets", "--repo", dir, "--base", baseSHA, "--ref", "HEAD", "-o", "json")
	var listed struct {
		Coverage *report.Coverage `json:"coverage"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &listed); err != nil || out.code != exitError || listed.Coverage == nil {
		t.Fatalf("drift targets --base: exit %d, %v\n%s%s", out.code, err, out.stdout, out.stderr)
	}
	for _, f := range listed.Coverage.Files {
		if g := coveredFile(rep, f.Path); g == nil || g.Status != f.Status {
			t.Errorf("drift targets says %s is %s, the report %+v", f.Path, f.Status, g)
		}
	}
	if len(listed.Coverage.Files) != len(rep.Coverage.Files) {
		t.Errorf("drift targets lists %d files, the report %d", len(listed.Coverage.Files), len(rep.Coverage.Files))
	}
}

// TestDeploysNothingIsTheBases: the base's drift.yaml names the paths that deploy
// nothing; a pull request that names more in its own drift.yaml does not hide its
// change to them.
func TestDeploysNothingIsTheBases(t *testing.T) {
	base := coverageFleet()
	base["drift.yaml"] = "discover: true\ndeploysNothing: [terraform]\ntargets: []\n"
	base["terraform/cluster.yaml"] = "apiVersion: tf.example/v1\nkind: Cluster\nmetadata: {name: prod}\n"
	dir, baseSHA := actionsCheckout(t, base, map[string]string{
		"drift.yaml":               "discover: true\ndeploysNothing: [terraform, overlays/**]\ntargets: []\n",
		"terraform/cluster.yaml":   "apiVersion: tf.example/v1\nkind: Cluster\nmetadata: {name: prod-2}\n",
		"overlays/extra/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: extra-2}\nrules: []\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", dir, "--base", baseSHA, "--ref", "HEAD")
	tf, role := coveredFile(rep, "terraform/cluster.yaml"), coveredFile(rep, "overlays/extra/role.yaml")
	if tf == nil || tf.Status != report.CoverageNotDeployed || tf.Incomplete {
		t.Errorf("terraform/cluster.yaml: %+v, want not-deployed as the base's deploysNothing says", tf)
	}
	if o.code != exitError || role == nil || role.Status != report.CoverageReadByNothing || !role.Incomplete {
		t.Errorf("the change's own deploysNothing hid its overlay: exit %d, %+v\n%s", o.code, role, o.stderr)
	}
}

// TestARemovedPathIsPreviewedFromTheBase: --path on a directory the pull request
// removes is previewed (the head renders nothing of it), not refused as missing; an
// object kubectl apply leaves behind is named, at the path and at the root alike. A
// path neither ref holds is still an error.
func TestARemovedPathIsPreviewedFromTheBase(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: {x: '1'}\n"
	}
	dir, baseSHA := actionsCheckout(t, map[string]string{"apps/a/cm.yaml": cm("removed-path-a"), "apps/b/cm.yaml": cm("removed-path-b")},
		map[string]string{"apps/b/cm.yaml": ""})
	for _, args := range [][]string{{"--path", "apps/b"}, {}} {
		rep, o := driftJSON(t, append([]string{"diff", "--repo", dir, "--base", baseSHA, "--ref", "HEAD"}, args...)...)
		if o.code != 0 || !rep.Complete || len(rep.Targets) != 1 {
			t.Fatalf("%v: exit %d, complete %v, %d targets\n%s", args, o.code, rep.Complete, len(rep.Targets), o.stderr)
		}
		notes := strings.Join(rep.Targets[0].Notes, "\n")
		if !strings.Contains(notes, "kubectl-server-side does not delete what it no longer applies: it stays in the cluster") || !strings.Contains(notes, "v1 ConfigMap default/removed-path-b") {
			t.Errorf("%v: the object left behind is not named: %q", args, notes)
		}
		if f := coveredFile(rep, "apps/b/cm.yaml"); f == nil || f.Status != report.CoveragePreviewed || !f.Removed {
			t.Errorf("%v: the removed file: %+v", args, f)
		}
	}
	if o := drift(t, "diff", "--repo", dir, "--base", baseSHA, "--ref", "HEAD", "--path", "apps/c"); o.code != exitError || !strings.Contains(o.stderr, "path apps/c is not in") {
		t.Errorf("a path neither ref holds: exit %d\n%s", o.code, o.stderr)
	}
}
