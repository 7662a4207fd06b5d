package controllercrds

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/testenv"
)

// Every file releases.json names is a CustomResourceDefinition named as the API
// server requires (plural.group), found by the kind it serves, and every release the
// docs name is there.
func TestEveryShippedFileIsACRDOfItsRelease(t *testing.T) {
	rels, err := Releases()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, rel := range rels {
		names[rel.Name] = rel.Version
		for _, c := range rel.Components {
			if c.Version == "" || c.From == "" || len(c.Files) == 0 {
				t.Errorf("%s %s: %+v", rel.Name, c.Name, c)
			}
		}
	}
	if names["flux"] == "" || names["flux-operator"] == "" || names["argo-cd"] == "" {
		t.Fatalf("releases: %v", names)
	}
	n := 0
	for _, crd := range byKind {
		n++
		obj := crd.Object
		plural, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "plural")
		if obj.GetKind() != "CustomResourceDefinition" || obj.GetName() != plural+"."+crd.Kind().Group {
			t.Errorf("%s: %s %s", crd.File, obj.GetKind(), obj.GetName())
		}
		if got, _ := For(crd.Kind()); got != crd {
			t.Errorf("For(%s) = %v", crd.Kind(), got)
		}
	}
	for _, gk := range []schema.GroupKind{
		{Group: "kustomize.toolkit.fluxcd.io", Kind: "Kustomization"}, {Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"},
		{Group: "source.toolkit.fluxcd.io", Kind: "OCIRepository"}, {Group: "notification.toolkit.fluxcd.io", Kind: "Alert"},
		{Group: "image.toolkit.fluxcd.io", Kind: "ImagePolicy"}, {Group: "source.extensions.fluxcd.io", Kind: "ArtifactGenerator"},
		{Group: "fluxcd.controlplane.io", Kind: "ResourceSet"}, {Group: "argoproj.io", Kind: "ApplicationSet"},
	} {
		if crd, _ := For(gk); crd == nil {
			t.Errorf("no CRD serves %s", gk)
		}
	}
	if crd, _ := For(schema.GroupKind{Group: "apps", Kind: "Deployment"}); crd != nil || n < 20 {
		t.Errorf("Deployment: %v; %d CRDs", crd, n)
	}
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// What a FluxInstance, a HelmRelease or an Argo CD Application says it installs.
func TestInstalls(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want *Install
	}{
		{"apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec: {distribution: {version: 2.7.x}}\n",
			&Install{Release: "flux", By: "FluxInstance flux-system/flux", Asks: "2.7.x", Namespace: "flux-system", Components: fluxInstanceDefaults}},
		{"apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\nspec: {distribution: {version: 2.x}, components: [source-controller]}\n",
			&Install{Release: "flux", By: "FluxInstance flux", Asks: "2.x", Namespace: "flux-system", Components: []string{"source-controller"}}},
		{"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: op, namespace: flux-system}\nspec: {chart: {spec: {chart: flux-operator, version: '>=0.30.0'}}}\n",
			&Install{Release: "flux-operator", By: "HelmRelease flux-system/op", Asks: ">=0.30.0", Chart: "flux-operator >=0.30.0"}},
		{"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: argocd, namespace: argocd}\nspec: {sources: [{chart: argo-cd, targetRevision: 8.1.0}]}\n",
			&Install{Release: "argo-cd", By: "Application argocd/argocd", Chart: "argo-cd 8.1.0"}},
		{"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo}\nspec: {chart: {spec: {chart: podinfo}}}\n", nil},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", nil},
	} {
		got := Installs(object(t, tc.doc))
		if (got == nil) != (tc.want == nil) || got != nil && (got.Release != tc.want.Release || got.By != tc.want.By || got.Asks != tc.want.Asks ||
			got.Chart != tc.want.Chart || got.Namespace != tc.want.Namespace || strings.Join(got.Components, ",") != strings.Join(tc.want.Components, ",")) {
			t.Errorf("%s: got %+v, want %+v", tc.doc, got, tc.want)
		}
	}
}

// Add gives the kinds used that nothing serves, leaves out what the server has and
// Flux's kinds the FluxInstance does not install, and Notes say so.
func TestServing(t *testing.T) {
	objs := []*unstructured.Unstructured{
		object(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec: {distribution: {version: 2.8.x}, components: [source-controller, kustomize-controller]}\n"),
		object(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a, namespace: flux-system}\n"),
		object(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: b, namespace: flux-system}\n"),
		object(t, "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: a, namespace: flux-system}\n"),
		object(t, "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: a, namespace: flux-system}\n"),
		object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"),
		object(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: guestbook, namespace: argocd}\n"),
	}
	var s Serving
	// The repository defines GitRepository's CRD itself.
	crds, err := s.Add(objs, true, func(name string) bool { return name == "gitrepositories.source.toolkit.fluxcd.io" })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range crds {
		got = append(got, c.GetName())
	}
	if strings.Join(got, " ") != "fluxinstances.fluxcd.controlplane.io kustomizations.kustomize.toolkit.fluxcd.io applications.argoproj.io" {
		t.Errorf("served: %v", got)
	}
	if again, _ := s.Add(objs, true, func(name string) bool { return name == "gitrepositories.source.toolkit.fluxcd.io" }); len(again) != 0 {
		t.Errorf("served twice: %d", len(again))
	}
	notes := strings.Join(s.Notes(objs), "\n")
	for _, want := range []string{
		`serves Kustomization with drift's copy of Flux v2.9.5's CustomResourceDefinitions: the repository does not define them; FluxInstance flux-system/flux asks for "2.8.x", which v2.9.5 is not`,
		"does not serve HelmRelease: FluxInstance flux-system/flux installs source-controller, kustomize-controller, not the controller of that kind",
		"serves FluxInstance with drift's copy of flux-operator v0.59.0's",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if ns := s.Namespaces(); ns["flux-system"] != "FluxInstance flux-system/flux installs Flux there" ||
		ns["argocd"] != "Application argocd/guestbook lives there, where Argo CD (installed outside the repository) runs" {
		t.Errorf("namespaces: %v", ns)
	}
}

var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &shared)) }

// A real API server establishes every shipped CRD and, through them, accepts the
// controllers' objects as written and refuses a misspelled field, as a cluster with
// the controller installed does.
func TestTheShippedCRDsServeTheControllersKinds(t *testing.T) {
	env := shared.Env(t)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	force := true
	for _, crd := range byKind {
		body, _ := crd.Object.MarshalJSON()
		if _, err := dyn.Resource(crdGVR).Patch(ctx, crd.Object.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "test", Force: &force}); err != nil {
			t.Fatalf("%s: %v", crd.File, err)
		}
	}
	for _, crd := range byKind {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := dyn.Resource(crdGVR).Get(ctx, crd.Object.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("%s is not established: %v", crd.Object.GetName(), err)
		}
	}
	dryRun := func(doc string) error {
		u := object(t, doc)
		gvk := u.GroupVersionKind()
		crd, _ := For(gvk.GroupKind())
		plural, _, _ := unstructured.NestedString(crd.Object.Object, "spec", "names", "plural")
		body, _ := u.MarshalJSON()
		_, err := dyn.Resource(gvk.GroupVersion().WithResource(plural)).Namespace("default").Patch(ctx, u.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "test", Force: &force, DryRun: []string{metav1.DryRunAll}})
		return err
	}
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: default}\n" +
		"spec: {project: default, destination: {server: https://kubernetes.default.svc, namespace: x}, source: {repoURL: https://example.com/r.git, path: apps, targetRevision: HEAD}}\n"
	appSet := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s, namespace: default}\n" +
		"spec: {generators: [{list: {elements: [{n: a}]}}], template: {metadata: {name: '{{n}}'}, spec: {project: default, destination: {server: https://kubernetes.default.svc}, source: {repoURL: https://example.com/r.git, path: apps}}}}\n"
	kustomization := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: k, namespace: default}\n" +
		"spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
	resourceSet := "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata: {name: r, namespace: default}\nspec: {inputs: [{a: b}], resources: []}\n"
	for _, doc := range []string{app, appSet, kustomization, resourceSet} {
		if err := dryRun(doc); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	for _, tc := range []struct{ doc, field string }{
		{strings.Replace(app, "project: default", "projekt: default", 1), ".spec.projekt: field not declared in schema"},
		{strings.Replace(kustomization, "prune: true", "prune: true, intervall: 5m", 1), ".spec.intervall: field not declared in schema"},
		{strings.Replace(kustomization, "prune: true", "prune: yes-please", 1), ".spec.prune: expected boolean"},
	} {
		if err := dryRun(tc.doc); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want refused: %s", tc.doc, err, tc.field)
		}
	}
}

// The namespaces a controller runs in are taken to exist only from the objects that
// decide how the server is checked (the base's): the head's FluxInstance or Argo CD
// Application in a new namespace does not make it.
func TestOnlyTrustedObjectsMakeNamespaces(t *testing.T) {
	var s Serving
	_, err := s.Add([]*unstructured.Unstructured{
		object(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: pr-flux}\nspec: {distribution: {version: 2.x}}\n"),
		object(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: pr-argo}\n"),
	}, false, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if ns := s.Namespaces(); len(ns) != 0 {
		t.Errorf("a pull request's objects made namespaces: %v", ns)
	}
	if n := strings.Join(s.Notes([]*unstructured.Unstructured{object(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: pr-argo}\n")}), ""); !strings.Contains(n, "serves Application") {
		t.Errorf("notes: %s", n)
	}
}
