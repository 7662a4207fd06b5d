package dryrun

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/testenv"
)

// shared is the API server this package's tests share, started by the first test
// that needs it.
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &shared)) }

// testEnv is the shared API server; without one the test is skipped (failed under
// CI=true).
func testEnv(t testing.TB) *testenv.Env {
	t.Helper()
	return shared.Env(t)
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func configMap(name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]any{"value": value},
	}}
}

// racingProxy forwards to the test API server; before forwarding a dry-run PATCH of
// the named ConfigMap it updates that ConfigMap for real, at most races times, so the
// resourceVersion drift pinned is stale.
type racingProxy struct {
	*httptest.Server
	gets, patches atomic.Int32
}

func newRacingProxy(t *testing.T, name string, races int) *racingProxy {
	t.Helper()
	rp, err := testEnv(t).ReverseProxy()
	if err != nil {
		t.Fatal(err)
	}
	direct := dynamic.NewForConfigOrDie(testEnv(t).Config)
	p := &racingProxy{}
	var mu sync.Mutex
	raced := 0
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/configmaps/"+name) {
			switch r.Method {
			case http.MethodGet:
				p.gets.Add(1)
			case http.MethodPatch:
				p.patches.Add(1)
				mu.Lock()
				if raced < races {
					raced++
					live, err := direct.Resource(cmGVR).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
					if err == nil {
						// A field the applied manifest does not set: the version changes,
						// no field manager conflict arises.
						live.SetAnnotations(map[string]string{"racer": fmt.Sprint(raced)})
						_, err = direct.Resource(cmGVR).Namespace("default").Update(context.Background(), live, metav1.UpdateOptions{FieldManager: "someone"})
					}
					if err != nil {
						t.Errorf("racing update: %v", err)
					}
				}
				mu.Unlock()
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func TestObjectChangedBetweenGetAndPatchIsReadAgain(t *testing.T) {
	for _, c := range []struct {
		name          string
		races         int
		wantPatches   int32
		wantErrReason reason.Reason
	}{
		{"changes once", 1, 2, ""},
		{"keeps changing", 10, maxVersionRetries, reason.ChangedDuringDiff},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := strings.ReplaceAll(c.name, " ", "-")
			direct := dynamic.NewForConfigOrDie(testEnv(t).Config)
			body, _ := json.Marshal(configMap(name, "v1").Object)
			force := true
			if _, err := direct.Resource(cmGVR).Namespace("default").Patch(context.Background(), name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "kubectl", Force: &force}); err != nil {
				t.Fatal(err)
			}
			proxy := newRacingProxy(t, name, c.races)
			clients, err := kube.NewClients(&rest.Config{Host: proxy.URL}, 4)
			if err != nil {
				t.Fatal(err)
			}
			results := Run(context.Background(), clients, []render.Object{{Obj: configMap(name, "v2"), Source: "cm.yaml", Doc: 1}}, Options{Applier: kubectlssa.New()})
			r := results[0]
			if c.wantErrReason != "" {
				if r.Err == nil || r.Err.Reason != c.wantErrReason {
					t.Fatalf("want error %s, got %+v", c.wantErrReason, r.Err)
				}
			} else {
				if r.Err != nil {
					t.Fatalf("unexpected error: %+v", r.Err)
				}
				merged, _, _ := unstructured.NestedString(r.Merged.Object, "data", "value")
				if r.Live.GetAnnotations()["racer"] != "1" || r.Merged.GetAnnotations()["racer"] != "1" || merged != "v2" ||
					r.Live.GetResourceVersion() != r.Merged.GetResourceVersion() {
					t.Fatalf("want the diff of the version read again (racer=1 on both sides, v2, same resourceVersion), got live %v merged %v %s (rv %s, %s)",
						r.Live.GetAnnotations(), r.Merged.GetAnnotations(), merged, r.Live.GetResourceVersion(), r.Merged.GetResourceVersion())
				}
				if len(r.Warnings) != 0 {
					t.Fatalf("unexpected warnings %+v", r.Warnings)
				}
			}
			if got := proxy.patches.Load(); got != c.wantPatches {
				t.Fatalf("%d dry-run patches, want %d", got, c.wantPatches)
			}
			if gets := proxy.gets.Load(); gets != c.wantPatches {
				t.Fatalf("%d gets, want one per attempt (%d)", gets, c.wantPatches)
			}
		})
	}
}
