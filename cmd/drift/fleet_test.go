package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// fluxInstanceFleet is a repository of three clusters side by side, each installed
// by its own FluxInstance syncing clusters/<name>, each applying apps/<name>: the
// same ConfigMap, another value per cluster. drift.yaml gives the ephemeral servers
// the Flux CRDs.
func fluxInstanceFleet(t *testing.T, values map[string]string) map[string]string {
	t.Helper()
	files := map[string]string{"drift.yaml": "discover: true\nephemeral: {crds: [crds]}\n"}
	for _, file := range []string{"flux-crds.yaml", "flux-operator-crds.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		var crds []string
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.Contains(doc, "kind: CustomResourceDefinition") {
				crds = append(crds, strings.Trim(doc, "\n"))
			}
		}
		files["crds/"+file] = strings.Join(crds, "\n---\n") + "\n"
	}
	for _, c := range []string{"alpha", "beta", "gamma"} {
		files["clusters/"+c+"/flux-system/flux-instance.yaml"] = "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\n" +
			"spec:\n  distribution: {version: '2.7.0', registry: ghcr.io/fluxcd}\n  sync: {kind: GitRepository, url: '" + fluxRemote + "', ref: refs/heads/main, path: clusters/" + c + "}\n"
		files["clusters/"+c+"/flux-system/namespace.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n"
		files["clusters/"+c+"/apps.yaml"] = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./apps/" + c + ", prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
		files["apps/"+c+"/settings.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {cluster: " + c + ", value: '" + values[c] + "'}\n"
	}
	return files
}

// TestAFleetIsPreviewedOneClusterAtATime: three FluxInstance clusters side by side
// are three clusters, each on an ephemeral server of its own, none refused, the same
// object in each no duplicate; a change to one cluster's apps is that cluster's
// change, as the Action runs it. Against live clusters, a root drift.yaml does not
// map to a context is refused with what to add.
func TestAFleetIsPreviewedOneClusterAtATime(t *testing.T) {
	base := fluxInstanceFleet(t, map[string]string{"alpha": "1", "beta": "1", "gamma": "1"})
	change := map[string]string{"apps/beta/settings.yaml": strings.Replace(base["apps/beta/settings.yaml"], "value: '1'", "value: '2'", 1)}
	dir, baseSHA := actionsCheckout(t, base, change)

	rep, o := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--ref", "HEAD")
	if o.code != exitChanges || !rep.Complete || rep.Summary.Error != 0 {
		t.Fatalf("the whole fleet: exit %d, %+v\n%s\n%s", o.code, rep.Summary, o.stdout, o.stderr)
	}
	for _, c := range []string{"alpha", "beta", "gamma"} {
		apps := targetNamed(rep, "clusters/"+c+"/Kustomization/flux-system/apps")
		if apps == nil || apps.Skipped != "" || len(apps.Objects) != 1 || apps.Objects[0].Category != report.Add || !strings.Contains(apps.Objects[0].Diff, "cluster: "+c) {
			t.Errorf("cluster %s: %+v", c, apps)
		}
	}

	rep, o = driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", "HEAD")
	if o.code != exitChanges || !rep.Complete || rep.Summary.Error != 0 || rep.Summary.Modify != 1 || rep.Summary.Add != 0 {
		t.Fatalf("one cluster's change: exit %d, %+v\n%s\n%s", o.code, rep.Summary, o.stdout, o.stderr)
	}
	beta := targetNamed(rep, "clusters/beta/Kustomization/flux-system/apps")
	if beta == nil || len(beta.Objects) != 1 || beta.Objects[0].Category != report.Modify {
		t.Errorf("cluster beta: %+v", beta)
	}
	for _, c := range []string{"alpha", "gamma"} {
		if tg := targetNamed(rep, "clusters/"+c+"/Kustomization/flux-system/apps"); tg == nil || tg.Skipped == "" {
			t.Errorf("cluster %s, which the change does not touch: %+v", c, tg)
		}
	}

	// A live run: no context for the roots.
	rep, o = driftJSON(t, "diff", "--repo", dir, "--ref", "HEAD")
	if o.code != exitError {
		t.Fatalf("live, unmapped: exit %d\n%s", o.code, o.stderr)
	}
	apps := targetNamed(rep, "clusters/alpha/Kustomization/flux-system/apps")
	if apps == nil || len(apps.Objects) != 1 || apps.Objects[0].ErrorReason != "config" || !strings.Contains(apps.Objects[0].Error, `clusters: {"clusters/alpha": <kube context>}`) {
		t.Errorf("live, unmapped: %+v", apps)
	}
}

// TestAChangeThatAddsAClusterKeepsTheOthersNames: a pull request that turns a
// repository of one cluster into a fleet (it adds two cluster roots beside the
// first) is discovered with the same roots on both refs: the first cluster's
// targets keep their names, read as unchanged, and only the new clusters' objects
// are added.
func TestAChangeThatAddsAClusterKeepsTheOthersNames(t *testing.T) {
	fleet := fluxInstanceFleet(t, map[string]string{"alpha": "1", "beta": "1", "gamma": "1"})
	base, change := map[string]string{}, map[string]string{}
	for name, data := range fleet {
		if strings.Contains(name, "/beta") || strings.Contains(name, "/gamma") {
			change[name] = data
			continue
		}
		base[name] = data
	}
	dir, baseSHA := actionsCheckout(t, base, change)
	rep, o := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", baseSHA, "--ref", "HEAD")
	if o.code != exitChanges || !rep.Complete || rep.Summary.Error != 0 || rep.Summary.Modify != 0 || rep.Summary.Delete != 0 {
		t.Fatalf("adding two clusters: exit %d, %+v\n%s\n%s", o.code, rep.Summary, o.stdout, o.stderr)
	}
	if alpha := targetNamed(rep, "clusters/alpha/Kustomization/flux-system/apps"); alpha == nil || !strings.Contains(alpha.Skipped, "inputs are unchanged") {
		t.Errorf("the first cluster's apps, which the change does not touch: %+v", alpha)
	}
	for _, c := range []string{"beta", "gamma"} {
		apps := targetNamed(rep, "clusters/"+c+"/Kustomization/flux-system/apps")
		if apps == nil || len(apps.Objects) != 1 || apps.Objects[0].Category != report.Add || !strings.Contains(apps.Objects[0].Diff, "cluster: "+c) {
			t.Errorf("new cluster %s: %+v", c, apps)
		}
	}
	for _, tg := range rep.Targets {
		for _, obj := range tg.Objects {
			if strings.Contains(obj.Diff, "cluster: alpha") {
				t.Errorf("%s: the first cluster's %s reads as %s", tg.Name, obj.Title(), obj.Category)
			}
		}
	}
}
