package dryrun

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// The reasons of errors come from what the API server answered (its code, reason and
// causes), checked here against a real one.

func previewObject(t *testing.T, c *kube.Clients, obj *unstructured.Unstructured) Result {
	t.Helper()
	res := Run(context.Background(), c, []render.Object{{Obj: obj, Source: "obj.yaml", Doc: 1}},
		Options{Applier: kubectlssa.New(), FieldManager: "drift-test", RequestTimeout: 10 * time.Second})
	return res[0]
}

func adminClients(t *testing.T) *kube.Clients {
	t.Helper()
	c, err := kube.NewClients(testEnv(t).Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantReason(t *testing.T, r Result, why reason.Reason, says ...string) {
	t.Helper()
	if r.Err == nil || r.Err.Reason != why {
		t.Fatalf("err = %+v, want reason %s", r.Err, why)
	}
	for _, s := range says {
		if !strings.Contains(r.Err.Message, s) {
			t.Errorf("message %q does not say %q", r.Err.Message, s)
		}
	}
}

func TestNamespaceBeingDeletedIsNotForbidden(t *testing.T) {
	ctx := context.Background()
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	direct := dynamic.NewForConfigOrDie(testEnv(t).Config)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "doomed"}}}
	if _, err := direct.Resource(nsGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No namespace controller runs here: the namespace stays Terminating.
	if err := direct.Resource(nsGVR).Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := configMap("late", "v")
	cm.SetNamespace("doomed")
	r := previewObject(t, adminClients(t), cm)
	wantReason(t, r, reason.NamespaceTerminating, "namespace doomed is being deleted", "kubectl get namespace doomed")
	if strings.Contains(r.Err.Message, "grant") {
		t.Errorf("RBAC advice for a namespace being deleted: %s", r.Err.Message)
	}
}

func TestAdmissionRefusalIsNotRBAC(t *testing.T) {
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "runs-as-nobody", "namespace": "default"},
		"spec": map[string]any{"serviceAccountName": "missing",
			"containers": []any{map[string]any{"name": "app", "image": "registry.example/app:1"}}},
	}}
	r := previewObject(t, adminClients(t), pod)
	wantReason(t, r, reason.AdmissionDenied, `error looking up service account default/missing`)
	if strings.Contains(r.Err.Message, "grant") {
		t.Errorf("RBAC advice for an admission refusal: %s", r.Err.Message)
	}
}

// userClients are clients of a new user of the test API server, with no
// permissions but those a test grants.
func userClients(t *testing.T, name string) *kube.Clients {
	t.Helper()
	kubeconfig, err := testEnv(t).AddUser(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClients(cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRBACRefusalIsForbidden(t *testing.T) {
	c := userClients(t, "nobody-status")
	r := previewObject(t, c, configMap("unreadable", "v"))
	wantReason(t, r, reason.Forbidden, "nobody-status may not get configmaps in namespace default", "grant")
}

func TestServiceClusterIPChangeIsImmutable(t *testing.T) {
	ctx := context.Background()
	svcGVR := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "pinned", "namespace": "default"},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(80)}}},
	}}
	body, err := svc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	live, err := dynamic.NewForConfigOrDie(testEnv(t).Config).Resource(svcGVR).Namespace("default").
		Patch(ctx, "pinned", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "drift-test"})
	if err != nil {
		t.Fatal(err)
	}
	ip, _, _ := unstructured.NestedString(live.Object, "spec", "clusterIP")
	other := "10.0.0.250"
	if ip == other {
		other = "10.0.0.251"
	}
	_ = unstructured.SetNestedField(svc.Object, other, "spec", "clusterIP")
	r := previewObject(t, adminClients(t), svc)
	wantReason(t, r, reason.Immutable, "spec.clusterIPs[0]", "may not change once set")
}

func TestFieldsOutsideTheSchemaAreInvalidAndSentOnce(t *testing.T) {
	p := newFaultProxy(t, func(string, string, int) fault { return nil })
	obj := configMap("misspelt", "v")
	obj.Object["dat"] = map[string]any{"k": "v"}
	r := previewObject(t, p.clients(t), obj)
	wantReason(t, r, reason.Invalid, "a field its schema does not declare", ".dat: field not declared in schema")
	if got := p.count("PATCH misspelt"); got != 1 {
		t.Errorf("%d PATCHes, want 1", got)
	}
}
