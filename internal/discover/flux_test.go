package discover

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/render"
)

var staging = Options{Paths: []string{"clusters/staging"}, Revisions: []string{"main"}}

func TestFluxKustomizationsAndHelmReleasesAreFollowedFromACluster(t *testing.T) {
	res := discoverIn(t, "flux", staging)
	got := strings.Join(names(res), "\n")
	// infra-configs before apps, which depends on it.
	want := strings.Join([]string{
		"Kustomization/flux-system/flux-system", "Kustomization/flux-system/infra-configs", "Kustomization/flux-system/apps",
		"HelmRelease/podinfo/podinfo", "HelmRelease/podinfo/redis",
	}, "\n")
	if got != want {
		t.Fatalf("targets:\n%s\nwant:\n%s", got, want)
	}
	ts := byName(res)
	apps := ts["Kustomization/flux-system/apps"]
	spec := apps.Specs[0]
	if spec.Path != "apps/staging" || spec.Renderer != render.RendererKustomize || !spec.AsFlux || apps.Applier != "flux" || !apps.Prune {
		t.Errorf("apps: %+v %+v", apps, spec)
	}
	if spec.Substitute["domain"] != "staging.example.com" || spec.Substitute["cluster_env"] != "staging" || spec.Substitute["api_token"] != "s3cr3t-t0ken-value" || len(spec.Substitute) != 3 {
		t.Errorf("apps substitutes %v: substituteFrom must be the staging cluster's cluster-vars", spec.Substitute)
	}
	if strings.Join(apps.DependsOn, ",") != "Kustomization/flux-system/infra-configs" {
		t.Errorf("apps depends on %v", apps.DependsOn)
	}
	if strings.Join(res.Secrets, ",") != "s3cr3t-t0ken-value" {
		t.Errorf("the Secret values definitions read are not given to the scrubber: %q", res.Secrets)
	}
	if apps.Flux == nil || apps.Flux.Name != "apps" || apps.Flux.Namespace != "flux-system" {
		t.Errorf("apps flux: %+v", apps.Flux)
	}
	if !contains(apps.Inputs, "clusters/staging/apps.yaml") || !contains(apps.Inputs, "clusters/staging/cluster-vars.yaml") {
		t.Errorf("apps inputs: %v", apps.Inputs)
	}

	pod := ts["HelmRelease/podinfo/podinfo"]
	h := pod.Specs[0].Helm
	if pod.Parent != "Kustomization/flux-system/apps" || pod.Specs[0].Path != "charts/podinfo" || pod.Applier != "helm" ||
		h.ReleaseName != "podinfo" || h.ReleaseNamespace != "podinfo" {
		t.Errorf("podinfo: %+v %+v", pod, h)
	}
	if h.Values["replicaCount"] != float64(2) || h.Values["ui"].(map[string]any)["color"] != "#34577c" {
		t.Errorf("podinfo values (valuesFrom, then values): %v", h.Values)
	}
	redis := ts["HelmRelease/podinfo/redis"]
	if c := redis.Specs[0].Helm.Chart; redis.Skipped != "" || redis.Refused != "" || c == nil ||
		*c != (render.ChartRef{RepoURL: "https://charts.example.com/bitnami", Name: "redis", Version: "18.1.2"}) {
		t.Errorf("redis: %+v", redis)
	}
}

// TestAFleetIsOneClusterPerRoot: two cluster directories side by side, each synced
// by its own flux-system Kustomization, are two clusters: each one's targets are
// named by its root and refused for nothing, the same Kustomization defined in both
// is no conflict, and what both reach through shared directories is each cluster's.
func TestAFleetIsOneClusterPerRoot(t *testing.T) {
	res := discoverIn(t, "flux", Options{Revisions: []string{"main"}})
	if strings.Join(res.Roots, " ") != "clusters/production clusters/staging" {
		t.Fatalf("roots %q", res.Roots)
	}
	ts := byName(res)
	for _, root := range res.Roots {
		for _, name := range []string{"Kustomization/flux-system/apps", "HelmRelease/podinfo/podinfo"} {
			got, ok := ts[root+"/"+name]
			if !ok || got.Root != root || got.Refused != "" {
				t.Errorf("%s/%s: %+v", root, name, got)
			}
		}
	}
	for _, tg := range res.Targets {
		if tg.Root == "" || !strings.HasPrefix(tg.Name, tg.Root+"/") {
			t.Errorf("target %s is in no cluster of the fleet (root %q)", tg.Name, tg.Root)
		}
		for _, dep := range tg.DependsOn {
			if !strings.HasPrefix(dep, tg.Root+"/") {
				t.Errorf("%s depends on %s, another cluster's", tg.Name, dep)
			}
		}
	}
	// Each cluster's apps read its own cluster-vars.
	stagingVars := ts["clusters/staging/Kustomization/flux-system/apps"].Specs[0].Substitute
	productionVars := ts["clusters/production/Kustomization/flux-system/apps"].Specs[0].Substitute
	if stagingVars["domain"] != "staging.example.com" || productionVars["domain"] != "production.example.com" {
		t.Errorf("substitutions: staging %v, production %v", stagingVars, productionVars)
	}
	// One cluster's directory is that cluster, named as before.
	res = discoverIn(t, "flux", staging)
	if len(res.Roots) != 0 || byName(res)["Kustomization/flux-system/apps"].Name == "" {
		t.Errorf("--path clusters/staging: roots %q, targets %v", res.Roots, names(res))
	}
}

func TestHelmReleaseNamesAreShortenedAsHelmControllerDoes(t *testing.T) {
	if n := helmReleaseName("", "team", "web"); n != "team-web" {
		t.Errorf("target namespace: %s", n)
	}
	long := helmReleaseName("", "", strings.Repeat("a", 60))
	if len(long) != 53 || !strings.HasPrefix(long, strings.Repeat("a", 40)+"-") {
		t.Errorf("long name: %s", long)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
