package dryrun

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
)

// listScene is a namespace whose ConfigMaps c0..c(n-1) are live with value "old";
// the preview renders them with "new", and two more that are not live.
type listScene struct {
	ns   string
	objs []render.Object
}

func newListScene(t *testing.T, ns string, live, unrelated int) listScene {
	t.Helper()
	direct := dynamic.NewForConfigOrDie(testEnv(t).Config)
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := direct.Resource(namespaceGVR).Create(context.Background(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := func(name, value string) *unstructured.Unstructured {
		u := configMap(name, value)
		u.SetNamespace(ns)
		return u
	}
	g := &errgroup.Group{}
	g.SetLimit(16)
	apply := func(u *unstructured.Unstructured) {
		g.Go(func() error {
			body, _ := json.Marshal(u.Object)
			force := true
			_, err := direct.Resource(cmGVR).Namespace(ns).Patch(context.Background(), u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "kubectl", Force: &force})
			return err
		})
	}
	s := listScene{ns: ns}
	for i := range live {
		apply(cm(fmt.Sprintf("c%d", i), "old"))
		s.objs = append(s.objs, render.Object{Obj: cm(fmt.Sprintf("c%d", i), "new"), Source: "cm.yaml", Doc: i + 1})
	}
	for i := range unrelated {
		apply(cm(fmt.Sprintf("other%d", i), "x"))
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s.objs = append(s.objs, render.Object{Obj: cm(fmt.Sprintf("added%d", i), "new"), Source: "added.yaml", Doc: i + 1})
	}
	return s
}

// check asserts that every object was previewed right: the live ones modified from
// old to new, the added ones new.
func (s listScene) check(t *testing.T, results []Result) {
	t.Helper()
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %+v", r.ID.Name, r.Err)
		}
		merged, _, _ := unstructured.NestedString(r.Merged.Object, "data", "value")
		if merged != "new" {
			t.Errorf("%s: predicted %q", r.ID.Name, merged)
		}
		if strings.HasPrefix(r.ID.Name, "added") != (r.Live == nil) {
			t.Errorf("%s: live %v", r.ID.Name, r.Live != nil)
		} else if r.Live != nil {
			if v, _, _ := unstructured.NestedString(r.Live.Object, "data", "value"); v != "old" && r.Live.GetAnnotations()["racer"] == "" {
				t.Errorf("%s: live %q", r.ID.Name, v)
			}
		}
	}
}

// Twelve live objects of one namespace are read with one LIST, not twelve GETs; an
// object the list does not hold is new, without a GET to confirm it.
func TestManyObjectsOfANamespaceAreReadByOneList(t *testing.T) {
	s := newListScene(t, "list-many", 12, 0)
	p := newFaultProxy(t, noFaults)
	results := Run(context.Background(), p.clients(t), s.objs, Options{Applier: kubectlssa.New(), FieldManager: "kubectl", RequestTimeout: 10 * time.Second})
	s.check(t, results)
	if lists, gets, patches := p.count("LIST"), p.total("GET "), p.total("PATCH "); lists != 1 || gets != 0 || patches != len(s.objs) {
		t.Errorf("%d LISTs, %d GETs, %d PATCHes; want 1, 0, %d", lists, gets, patches, len(s.objs))
	}
	// Fewer than kube.ListMin objects are read one by one.
	few := newListScene(t, "list-few", kube.ListMin-3, 0)
	p = newFaultProxy(t, noFaults)
	few.check(t, Run(context.Background(), p.clients(t), few.objs, Options{Applier: kubectlssa.New(), FieldManager: "kubectl", RequestTimeout: 10 * time.Second}))
	if lists := p.count("LIST"); lists != 0 {
		t.Errorf("%d objects: %d LISTs, want GETs", len(few.objs), lists)
	}
}

// Objects of more namespaces than the window holds, interleaved in the input, sent
// one at a time: each namespace's objects go together, its LIST is read at most
// the clients' ListAhead objects ahead of them (so a run holds a few namespaces' live
// copies, not all), and nothing waits for a list that cannot be read yet.
func TestListsAreReadAFewNamespacesAhead(t *testing.T) {
	const ahead = 4
	const namespaces = ahead + 3
	var scenes []listScene
	for n := range namespaces {
		scenes = append(scenes, newListScene(t, fmt.Sprintf("list-window-%d", n), kube.ListMin, 0))
	}
	var objs []render.Object
	for i := range scenes[0].objs {
		for _, s := range scenes {
			objs = append(objs, s.objs[i])
		}
	}
	p := newFaultProxy(t, noFaults)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := p.clients(t)
	c.ListAhead = ahead * kube.ListMin // four namespaces' objects
	results := Run(ctx, c, objs, Options{Applier: kubectlssa.New(), FieldManager: "kubectl", RequestTimeout: 10 * time.Second, Concurrency: 1})
	for _, s := range scenes {
		var mine []Result
		for _, r := range results {
			if r.ID.Namespace == s.ns {
				mine = append(mine, r)
			}
		}
		s.check(t, mine)
	}
	if lists, gets := p.count("LIST"), p.total("GET "); lists != namespaces || gets != 0 {
		t.Errorf("%d LISTs, %d GETs; want %d, 0", lists, gets, namespaces)
	}
	patched := map[string]int{}
	complete, lists := 0, 0
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.log {
		what, ns, _ := strings.Cut(e, " ")
		if what == "PATCH" {
			if patched[ns]++; patched[ns] == len(scenes[0].objs) {
				complete++
			}
			continue
		}
		// The group before leaves the window when its last object takes its copy,
		// just before that object's PATCH: one more may be under way.
		if lists++; lists-complete > ahead+1 {
			t.Fatalf("LIST %d (%s) read with only %d namespaces done: more than %d ahead\n%s", lists, ns, complete, ahead, strings.Join(p.log, "\n"))
		}
	}
}

// An object that changes between the LIST and its dry run is read again with a GET
// and previewed against what it is now, never against the listed copy.
func TestObjectChangedAfterTheListIsReadAgain(t *testing.T) {
	s := newListScene(t, "list-race", 10, 0)
	direct := dynamic.NewForConfigOrDie(testEnv(t).Config)
	p := newFaultProxy(t, func(method, name string, n int) fault {
		if method != http.MethodPatch || name != "c3" || n != 1 {
			return nil
		}
		// The object changes after the list, before its dry run.
		live, err := direct.Resource(cmGVR).Namespace(s.ns).Get(context.Background(), "c3", metav1.GetOptions{})
		if err == nil {
			live.SetAnnotations(map[string]string{"racer": "1"})
			_, err = direct.Resource(cmGVR).Namespace(s.ns).Update(context.Background(), live, metav1.UpdateOptions{FieldManager: "someone"})
		}
		if err != nil {
			t.Errorf("racing update: %v", err)
		}
		return nil
	})
	results := Run(context.Background(), p.clients(t), s.objs, Options{Applier: kubectlssa.New(), FieldManager: "kubectl", RequestTimeout: 10 * time.Second})
	s.check(t, results)
	for _, r := range results {
		if r.ID.Name != "c3" {
			continue
		}
		if r.Live.GetAnnotations()["racer"] != "1" || r.Live.GetResourceVersion() != r.Merged.GetResourceVersion() {
			t.Errorf("c3 previewed against the listed copy: live %v rv %s, merged rv %s", r.Live.GetAnnotations(), r.Live.GetResourceVersion(), r.Merged.GetResourceVersion())
		}
	}
	if gets, patches := p.count("GET c3"), p.count("PATCH c3"); gets != 1 || patches != 2 {
		t.Errorf("c3: %d GETs, %d PATCHes; want 1 and 2 (read again once)", gets, patches)
	}
}

// A user who may get but not list gets the whole report, by GETs, and is told once.
func TestListForbiddenFallsBackToGets(t *testing.T) {
	s := newListScene(t, "list-forbidden", 9, 0)
	direct := dynamic.NewForConfigOrDie(testEnv(t).Config)
	role := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "get-patch", "namespace": s.ns},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "patch", "create"}}}}}
	binding := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "get-patch", "namespace": s.ns},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "get-patch"},
		"subjects": []any{map[string]any{"kind": "User", "name": "no-list", "apiGroup": "rbac.authorization.k8s.io"}}}}
	for gvr, obj := range map[string]*unstructured.Unstructured{"roles": role, "rolebindings": binding} {
		res := direct.Resource(rbacGVR(gvr)).Namespace(s.ns)
		if _, err := res.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := userClients(t, "no-list")
	var warnings []string
	opts := Options{Applier: kubectlssa.New(), FieldManager: "kubectl", RequestTimeout: 10 * time.Second, Warnf: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }}
	s.check(t, Run(context.Background(), c, s.objs, opts))
	s.check(t, Run(context.Background(), c, s.objs, opts))
	if len(warnings) != 1 || !strings.Contains(warnings[0], "may not list configmaps in namespace list-forbidden") {
		t.Errorf("warnings: %q; want one saying the list was refused", warnings)
	}
}

// In a namespace holding far more objects of the resource than are previewed, a LIST
// would read them all: the first page's remainingItemCount says so, and drift reads
// the previewed ones with GETs.
func TestCrowdedNamespaceIsReadByGets(t *testing.T) {
	s := newListScene(t, "list-crowded", kube.ListMin, kube.ListPage+kube.ListSpare*(kube.ListMin+2))
	p := newFaultProxy(t, noFaults)
	s.check(t, Run(context.Background(), p.clients(t), s.objs, Options{Applier: kubectlssa.New(), FieldManager: "kubectl", RequestTimeout: 10 * time.Second}))
	if lists, gets := p.count("LIST"), p.total("GET "); lists != 1 || gets < kube.ListMin {
		t.Errorf("%d LISTs (one first page), %d GETs; want the previewed objects read by GET", lists, gets)
	}
}

func noFaults(string, string, int) fault { return nil }

func rbacGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: resource}
}
