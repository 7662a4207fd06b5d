package discover

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// TestEachRefusalHasTheReasonOfWhatWentWrong: a target drift cannot preview is
// refused with the reason of what went wrong, whose hint says what to do; "vendor or
// pre-render it" (refused) is for what drift will not run or fetch.
func TestEachRefusalHasTheReasonOfWhatWentWrong(t *testing.T) {
	const gitRepo = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: 'https://github.com/example/fleet', ref: {branch: main}}\n"
	ks := func(name, extra string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: " + name + "-src}\n" + extra
	}
	fsys := fstest.MapFS{
		"clusters/a/source.yaml":  {Data: []byte(gitRepo)},
		"clusters/a/missing.yaml": {Data: []byte(strings.ReplaceAll(ks("missing", "  postBuild: {substituteFrom: [{kind: ConfigMap, name: vars}]}\n"), "missing-src", "flux-system"))},
		"clusters/a/live.yaml":    {Data: []byte(ks("live", ""))},
		"clusters/a/dup1.yaml":    {Data: []byte(strings.ReplaceAll(ks("dup", ""), "dup-src", "flux-system"))},
		"clusters/a/dup2.yaml":    {Data: []byte(strings.ReplaceAll(strings.ReplaceAll(ks("dup", ""), "dup-src", "flux-system"), "./apps", "./other"))},
		"clusters/a/nochart.yaml": {Data: []byte("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: nochart, namespace: flux-system}\nspec: {interval: 1m}\n")},
		"apps/cm.yaml":            {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")},
		"other/cm.yaml":           {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n")},
	}
	opts := Options{RepoURLs: []string{"https://github.com/example/fleet"}, Revisions: []string{"main"},
		Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) },
		LiveObject: func(kind, ns, name string) (*unstructured.Unstructured, error) {
			if name == "live-src" {
				return nil, errors.New("connection refused")
			}
			return nil, nil
		}}
	res, err := Discover(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := byName(res)
	for name, want := range map[string]reason.Reason{
		"Kustomization/flux-system/missing": reason.NotFound,
		"Kustomization/flux-system/live":    reason.Unavailable,
		"Kustomization/flux-system/dup":     reason.Duplicate,
		"HelmRelease/flux-system/nochart":   reason.Invalid,
	} {
		got := ts[name]
		if got.Refused == "" || got.RefusedReason != want {
			t.Errorf("%s: refused %q as %q, want %q", name, got.Refused, got.RefusedReason, want)
		}
		if want.Hint() == reason.Refused.Hint() {
			t.Errorf("%s: the hint of %s is refused's", name, want)
		}
	}
}

// TestAnInterruptedDiscoveryReturnsWhatItFound: the run ends while an
// ApplicationSet is being expanded; discovery returns the error, the Applications it
// had made, and a not-checked failure naming the ApplicationSet, and nothing of the
// expansion the end cut short.
func TestAnInterruptedDiscoveryReturnsWhatItFound(t *testing.T) {
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\n" +
		"spec: {project: default, source: {repoURL: 'https://github.com/example/fleet', targetRevision: main, path: plain}, destination: {server: 'https://kubernetes.default.svc', namespace: apps}}\n"
	set := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: z, namespace: argocd}\n" +
		"spec: {generators: [{list: {elements: [{n: '1'}]}}], template: {metadata: {name: 'z-{{n}}'}, spec: {project: default, source: {repoURL: 'https://github.com/example/fleet', targetRevision: main, path: plain}, destination: {server: 'https://kubernetes.default.svc', namespace: apps}}}}\n"
	fsys := fstest.MapFS{
		"apps/a.yaml":  {Data: []byte(app)},
		"apps/z.yaml":  {Data: []byte(set)},
		"plain/c.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")},
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	opts := Options{RepoURLs: []string{"https://github.com/example/fleet"}, Revisions: []string{"main"},
		Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) },
		Expand: func(req appset.Request, what string) (*appset.Result, error) {
			cancel(errors.New("terminated signal received"))
			return nil, errors.New(what + ": the render worker was stopped")
		}}
	res, err := Discover(ctx, fsys, opts)
	if err == nil || res == nil || !res.Interrupted || !strings.Contains(err.Error(), "terminated signal received") {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if got := strings.Join(names(res), " "); got != "Application/a" {
		t.Errorf("targets %q, want the Application found before the end", got)
	}
	if len(res.Failures) != 1 {
		t.Fatalf("failures %+v, want where discovery stopped", res.Failures)
	}
	f := res.Failures[0]
	if f.Reason != reason.NotChecked || f.Source != "apps/z.yaml" || f.ID == nil || f.ID.Kind != "ApplicationSet" || f.ID.Name != "z" ||
		!strings.Contains(f.Message, "discovery stopped here") || strings.Contains(f.Message, "raise --timeout") {
		t.Errorf("failure %+v", f)
	}
}

// TestClusterRootsReadAnySpec: a flux-system Kustomization or a FluxInstance whose
// spec is missing, null or not a mapping names no cluster root, and breaks nothing.
func TestClusterRootsReadAnySpec(t *testing.T) {
	fsys := fstest.MapFS{}
	for i, spec := range []string{"", "spec: null\n", "spec: [1]\n", "spec: {sync: 3}\n", "spec: {path: [x]}\n"} {
		dir := fmt.Sprintf("clusters/c%d/flux-system/", i)
		fsys[dir+"sync.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\n" + spec)}
		fsys[dir+"instance.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\n" + spec)}
	}
	opts := Options{Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) }}
	res, err := Discover(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Roots) != 0 {
		t.Errorf("roots %q", res.Roots)
	}
}

// TestWhatARootSyncsIsThatClustersWhenItsSourceIsUnknown: a fleet whose clusters'
// Kustomizations sync tenants/<cluster> from a source drift cannot find (a bootstrap
// placeholder, as in Flux's multi-tenancy example) still has each cluster's tenant
// Kustomization, which discovery builds from tenants/<cluster> on its own, in that
// cluster: two differing definitions in two clusters, no duplicate.
func TestWhatARootSyncsIsThatClustersWhenItsSourceIsUnknown(t *testing.T) {
	fsys := fstest.MapFS{
		"tenants/base/team/sync.yaml": {Data: []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: team, namespace: apps}\n" +
			"spec: {interval: 5m, path: ./deploy, sourceRef: {kind: GitRepository, name: team}}\n")},
		"tenants/base/team/kustomization.yaml": {Data: []byte("resources: [sync.yaml]\n")},
	}
	for _, c := range []string{"production", "staging"} {
		fsys["clusters/"+c+"/flux-system/gotk-sync.yaml"] = &fstest.MapFile{Data: []byte("# generated by flux bootstrap\n")}
		fsys["clusters/"+c+"/tenants.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: tenants, namespace: flux-system}\n" +
			"spec: {interval: 5m, path: ./tenants/" + c + ", prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n")}
		fsys["tenants/"+c+"/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources: [../base/team]\npatches:\n- patch: |\n    - {op: replace, path: /spec/path, value: ./" + c + "}\n  target: {kind: Kustomization}\n")}
	}
	opts := Options{Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) }}
	res, err := Discover(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := byName(res)
	for _, c := range []string{"production", "staging"} {
		team, ok := ts["clusters/"+c+"/Kustomization/apps/team"]
		if !ok || team.Root != "clusters/"+c || team.RefusedReason == reason.Duplicate {
			t.Errorf("cluster %s's tenant: %+v (targets %v)", c, team, names(res))
		}
	}
}

// TestArgoCDRootApplicationsSideBySideAreAFleet: two cluster directories, each with
// the root Application of its own Argo CD (in-cluster, an app of apps over the
// directory's apps/), are two clusters: the same Applications in each are each
// cluster's, no duplicate. An Application over a directory of plain manifests is no
// root.
func TestArgoCDRootApplicationsSideBySideAreAFleet(t *testing.T) {
	app := func(name, path, ns string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + ", namespace: argocd}\n" +
			"spec:\n  project: default\n  source: {repoURL: 'https://git.example/fleet', targetRevision: HEAD, path: " + path + "}\n" +
			"  destination: {server: 'https://kubernetes.default.svc', namespace: " + ns + "}\n"
	}
	fsys := fstest.MapFS{
		"guestbook/base/cm.yaml":       {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guestbook}\n")},
		"standalone/app.yaml":          {Data: []byte(app("standalone", "standalone/manifests", "tools"))},
		"standalone/manifests/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tool}\n")},
	}
	for _, c := range []string{"east", "west"} {
		fsys["clusters/"+c+"/root.yaml"] = &fstest.MapFile{Data: []byte(app("root", "clusters/"+c+"/apps", "argocd"))}
		fsys["clusters/"+c+"/apps/guestbook.yaml"] = &fstest.MapFile{Data: []byte(app("guestbook", "guestbook/base", "guestbook-"+c))}
	}
	opts := Options{RepoURLs: []string{"https://git.example/fleet"}, Revisions: []string{"main"},
		Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) }}
	res, err := Discover(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Roots, " ") != "clusters/east clusters/west" {
		t.Fatalf("roots %q, targets %v", res.Roots, names(res))
	}
	ts := byName(res)
	for _, c := range []string{"east", "west"} {
		for _, name := range []string{"Application/root", "Application/guestbook"} {
			got, ok := ts["clusters/"+c+"/"+name]
			if !ok || got.Refused != "" || got.Root != "clusters/"+c {
				t.Errorf("cluster %s's %s: %+v (targets %v)", c, name, got, names(res))
			}
		}
	}
}

// A HelmRelease without metadata.namespace found in a file that nothing drift reads
// applies (its Kustomization reads an OCI artifact drift does not map) is skipped,
// its namespace not known: kustomize-controller's refusal is certain only when drift
// knows what applies it. Under a Flux Kustomization without targetNamespace, the
// same HelmRelease is refused as Flux refuses it.
func TestAHelmReleaseWithoutNamespaceIsRefusedOnlyWhenItsApplierIsKnown(t *testing.T) {
	hr := &fstest.MapFile{Data: []byte("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app}\n" +
		"spec: {interval: 1h, chart: {spec: {chart: app, sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}}}}\n")}
	sync := &fstest.MapFile{Data: []byte("apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n" +
		"spec: {url: 'https://git.example/fleet', ref: {branch: main}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n" +
		"metadata: {name: apps, namespace: flux-system}\nspec: {interval: 1h, path: ./apps/base, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n")}
	ks := &fstest.MapFile{Data: []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app, namespace: flux-system}\n" +
		"spec: {interval: 1h, path: ./apps/base/app, targetNamespace: default, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n")}
	for name, c := range map[string]struct {
		files            fstest.MapFS
		skipped, refused string
	}{
		"applied by nothing drift reads": {files: fstest.MapFS{"apps/base/app/hr.yaml": hr}, skipped: "drift finds nothing that applies it"},
		"applied by a Kustomization":     {files: fstest.MapFS{"apps/base/app/hr.yaml": hr, "clusters/prod/sync.yaml": sync}, refused: "kustomize-controller refuses it"},
		// As a home lab bootstrapped by flux-operator writes it: the Kustomization that
		// gives the namespace reads a GitRepository the repository does not hold, so
		// drift skips it and builds its directory on its own.
		"named by a Kustomization drift does not follow": {files: fstest.MapFS{"apps/base/app/hr.yaml": hr,
			"apps/base/app/kustomization.yaml": {Data: []byte("resources: [hr.yaml]\n")}, "apps/base/app/ks.yaml": ks}, skipped: "drift finds nothing that applies it"},
	} {
		opts := Options{RepoURLs: []string{"https://git.example/fleet"}, Revisions: []string{"main"},
			Render: func(spec render.Spec) (*render.Result, error) { return render.Render(c.files, spec) }}
		res, err := Discover(context.Background(), c.files, opts)
		if err != nil {
			t.Fatal(err)
		}
		var app *Target
		for i := range res.Targets {
			if res.Targets[i].Kind == KindHelmRelease {
				app = &res.Targets[i]
			}
		}
		if app == nil || c.skipped != "" && (!strings.Contains(app.Skipped, c.skipped) || app.Refused != "") ||
			c.refused != "" && !strings.Contains(app.Refused, c.refused) {
			t.Errorf("%s: %+v", name, app)
		}
	}
}
