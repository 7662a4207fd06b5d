package prune

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/testenv"
)

// shared is the API server this package's tests share, started by the first test
// that needs it.
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &shared)) }

// controllerCRDs are the Flux Kustomization's and Argo CD Application's kinds as the
// tests need them: what prune reads of them (spec, status, finalizers) is kept as
// written.
const controllerCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: kustomizations.kustomize.toolkit.fluxcd.io}
spec:
  group: kustomize.toolkit.fluxcd.io
  scope: Namespaced
  names: {plural: kustomizations, singular: kustomization, kind: Kustomization, listKind: KustomizationList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: applications.argoproj.io}
spec:
  group: argoproj.io
  scope: Namespaced
  names: {plural: applications, singular: application, kind: Application, listKind: ApplicationList}
  versions:
  - {name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`

var (
	crdsOnce sync.Once
	crdsErr  error
	crdGVR   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// cluster is the shared server with the controllers' kinds and the namespaces the
// tests use, and clients of it that know those kinds.
func cluster(t *testing.T, namespaces ...string) *kube.Clients {
	t.Helper()
	env := shared.Env(t)
	crdsOnce.Do(func() { crdsErr = installCRDs(dynamic.NewForConfigOrDie(env.Config)) })
	if crdsErr != nil {
		t.Fatal(crdsErr)
	}
	for _, ns := range append([]string{"flux-system", "argocd"}, namespaces...) {
		create(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	}
	c, err := kube.NewClients(env.Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// installCRDs creates the controllers' kinds and waits until they are served.
func installCRDs(dyn dynamic.Interface) error {
	for _, doc := range strings.Split(controllerCRDs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return err
		}
		if _, err := dyn.Resource(crdGVR).Create(context.Background(), u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd, err := dyn.Resource(crdGVR).Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// create applies doc for real (status included: the test kinds have no status
// subresource), as a test manager; an object already there is applied over.
func create(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := fromYAML(t, doc)
	c, err := kube.NewClients(shared.Env(t).Config, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ResourceFor(object.IDOf(u))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(u.Object)
	force := true
	live, err := res.Patch(context.Background(), u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "test", Force: &force})
	if err != nil {
		t.Fatalf("%s: %v", object.IDOf(u).Display(), err)
	}
	return live
}

// rendered is a target's render of docs, and the results planning gives them (their
// namespaces defaulted to ns).
func rendered(t *testing.T, ns string, docs ...string) (*render.Result, []dryrun.Result) {
	t.Helper()
	res := &render.Result{}
	var results []dryrun.Result
	for i, d := range docs {
		o := render.Object{Obj: fromYAML(t, d), Source: "target.yaml", Doc: i + 1}
		res.Objects = append(res.Objects, o)
		id := o.ID()
		if id.Namespace == "" {
			id.Namespace = ns
		}
		results = append(results, dryrun.Result{ID: id, Object: o})
	}
	return res, results
}

// found is what pruning found, by name: the deletes' inventories and the kept
// objects' reasons.
type found struct {
	deletes map[string]string
	kept    map[string]string
}

func summary(t *testing.T, r Result) found {
	t.Helper()
	f := found{deletes: map[string]string{}, kept: map[string]string{}}
	for _, d := range r.Deletes {
		if d.Err != nil {
			t.Fatalf("%s: %+v", d.ID.Display(), d.Err)
		}
		if d.Live == nil || d.Merged != nil {
			t.Errorf("%s: a delete has the live object and no prediction; live %v, merged %v", d.ID.Display(), d.Live != nil, d.Merged != nil)
		}
		f.deletes[d.ID.Kind+"/"+d.ID.Name] = d.Inventory
	}
	for _, k := range r.Kept {
		f.kept[k.ID.Kind+"/"+k.ID.Name] = k.Reason
	}
	return f
}

// stillLive fails the test when a dry-run delete deleted the object.
func stillLive(t *testing.T, c *kube.Clients, id object.ID) {
	t.Helper()
	res, err := c.ResourceFor(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Get(context.Background(), id.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("%s after the dry run: %v", id.Display(), err)
	}
}
