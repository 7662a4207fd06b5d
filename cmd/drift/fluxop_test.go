package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAFluxOperatorRepositoryIsPreviewed: a FluxInstance's spec.sync makes the
// flux-system GitRepository and the root Kustomization, neither in git. drift makes
// them as the Flux Operator does, follows the root Kustomization to the apps and a
// ResourceSet, and previews all of them; the ResourceSet's resources are rendered as
// the operator renders them.
func TestAFluxOperatorRepositoryIsPreviewed(t *testing.T) {
	installFluxCRDs(t)
	crds, err := os.ReadFile(filepath.Join("testdata", "flux-operator-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, "kubectl", string(crds))
	if out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "wait", "--for", "condition=established", "--timeout", "30s",
		"crd/fluxinstances.fluxcd.controlplane.io", "crd/resourcesets.fluxcd.controlplane.io").CombinedOutput(); err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
	ns := namespace(t)
	files := map[string]string{}
	root := filepath.Join("..", "..", "testdata", "flux-operator")
	if err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = sub(string(data), ns)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r := repo(t, files)
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--path", "clusters/main")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want 1\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	sync := targetNamed(rep, "Kustomization/flux-system/flux-system")
	if sync == nil || sync.Skipped != "" || sync.Path != "clusters/main/sync" {
		t.Fatalf("the root Kustomization the FluxInstance makes: %+v", sync)
	}
	apps := targetNamed(rep, "Kustomization/flux-system/"+ns+"-apps")
	if apps == nil || len(apps.Objects) != 1 || apps.Objects[0].Name != "app" || apps.Objects[0].Category != "add" {
		t.Errorf("the apps Kustomization: %+v", apps)
	}
	rs := targetNamed(rep, "ResourceSet/"+ns+"/tenants")
	if rs == nil || len(rs.Objects) != 2 {
		t.Fatalf("the ResourceSet: %+v", rs)
	}
	for _, obj := range rs.Objects {
		if obj.Category != "add" || !strings.HasSuffix(obj.Name, "-quota") || !strings.Contains(obj.Diff, "resourceset.fluxcd.controlplane.io/name: tenants") {
			t.Errorf("ResourceSet object %s: %s\n%s", obj.Name, obj.Category, obj.Diff)
		}
	}
	// The Kustomization objects the root Kustomization applies are previewed too.
	found := false
	for _, obj := range sync.Objects {
		found = found || (obj.Kind == "Kustomization" && obj.Name == ns+"-apps")
	}
	if !found {
		t.Errorf("the root Kustomization does not apply the apps Kustomization: %+v", sync.Objects)
	}
}
