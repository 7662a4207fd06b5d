package kube_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/testenv"
)

// memKeeper keeps records in memory.
type memKeeper struct {
	mu    sync.Mutex
	data  map[string][]byte
	keeps int
}

func (k *memKeeper) Load(key string) ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	d, ok := k.data[key]
	return d, ok
}

func (k *memKeeper) Keep(key string, data []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.data[key] = data
	k.keeps++
}

// TestDiscoveryIsKeptAndRevalidated: a run keeps the server's discovery documents;
// the next asks for each with its ETag, is told 304 Not Modified with no body, and
// maps and reports capabilities as the server would; a CRD created in between makes
// the server send /apis again (the new kind is found, and kept); a kind a record
// lacks is found after the mapper's Reset, from the server.
func TestDiscoveryIsKeptAndRevalidated(t *testing.T) {
	env := testenv.StartFor(t)
	rp, err := env.ReverseProxy()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sent := map[string]int{} // discovery documents the server sent whole
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api" && r.URL.Path != "/apis" {
			rp.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		mu.Lock()
		if rec.Code == http.StatusOK {
			sent[r.URL.Path]++
		}
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	defer proxy.Close()
	discoverySent := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := sent["/api"] + sent["/apis"]
		clear(sent)
		return n
	}
	keeper := &memKeeper{data: map[string][]byte{}}
	ctx := t.Context()
	configMap := schema.GroupKind{Kind: "ConfigMap"}
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}

	// run connects as drift does (Reachable, then KeepDiscovery) and maps gk.
	run := func(gk schema.GroupKind) (*kube.Clients, *meta.RESTMapping, error) {
		t.Helper()
		c, err := kube.NewClients(&rest.Config{Host: proxy.URL}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Reachable(ctx); err != nil {
			t.Fatal(err)
		}
		c.KeepDiscovery(keeper)
		m, err := c.Mapper.RESTMapping(gk)
		return c, m, err
	}

	c, m, err := run(configMap)
	if err != nil || m.Resource.Resource != "configmaps" {
		t.Fatalf("first run: %v %v", m, err)
	}
	_, firstAPIs, err := c.Capabilities()
	if err != nil {
		t.Fatal(err)
	}
	if n := discoverySent(); n != 2 || keeper.keeps != 1 || c.DiscoveryTaken() != 0 {
		t.Fatalf("first run: %d discovery documents sent, %d records kept, %d taken; want 2 sent, 1 kept, none taken", n, keeper.keeps, c.DiscoveryTaken())
	}

	c, m, err = run(configMap)
	if err != nil || m.Resource.Resource != "configmaps" {
		t.Fatalf("second run: %v %v", m, err)
	}
	_, apis, err := c.Capabilities()
	if err != nil {
		t.Fatal(err)
	}
	if n := discoverySent(); n != 0 || c.DiscoveryTaken() != 2 || keeper.keeps != 1 {
		t.Fatalf("second run: %d discovery documents sent, %d taken, %d kept; want both taken from the record", n, c.DiscoveryTaken(), keeper.keeps)
	}
	if len(apis) != len(firstAPIs) || len(apis) < 50 {
		t.Fatalf("capabilities from the record: %d API versions, the server's: %d", len(apis), len(firstAPIs))
	}
	for i := range apis {
		if apis[i] != firstAPIs[i] {
			t.Fatalf("capabilities differ at %d: %q, the server's %q", i, apis[i], firstAPIs[i])
		}
	}

	createWidgetCRD(t, env.Config)
	c, m, err = run(widget)
	if err != nil || m.Resource.Resource != "widgets" {
		t.Fatalf("after a CRD was created: %v %v", m, err)
	}
	if n := discoverySent(); n != 1 || c.DiscoveryTaken() != 1 || keeper.keeps != 2 {
		t.Fatalf("after a CRD was created: %d discovery documents sent, %d taken, %d kept; want /apis sent and kept, /api taken", n, c.DiscoveryTaken(), keeper.keeps)
	}
	c, m, err = run(widget)
	if err != nil || m.Resource.Resource != "widgets" || c.DiscoveryTaken() != 2 || discoverySent() != 0 {
		t.Fatalf("the run after: %v %v, %d taken", m, err, c.DiscoveryTaken())
	}

	// A record that lacks a kind the server serves (as the fingerprint cannot see an
	// aggregated server's kinds): a miss, then the server after Reset.
	var rec struct {
		Format int `json:"format"`
		API    any `json:"api"`
		APIs   struct {
			ETag string `json:"etag"`
			Body struct {
				Kind       string           `json:"kind"`
				APIVersion string           `json:"apiVersion"`
				Items      []map[string]any `json:"items"`
			} `json:"body"`
		} `json:"apis"`
	}
	if err := json.Unmarshal(keeper.data[proxy.URL], &rec); err != nil {
		t.Fatal(err)
	}
	items := rec.APIs.Body.Items
	rec.APIs.Body.Items = nil
	for _, g := range items {
		if g["metadata"].(map[string]any)["name"] != "example.com" {
			rec.APIs.Body.Items = append(rec.APIs.Body.Items, g)
		}
	}
	if len(rec.APIs.Body.Items) != len(items)-1 {
		t.Fatalf("the record's /apis holds no group example.com: %d groups", len(items))
	}
	keeper.data[proxy.URL], _ = json.Marshal(rec)
	c, _, err = run(widget)
	if !meta.IsNoMatchError(err) {
		t.Fatalf("a record without widgets: %v, want no match", err)
	}
	discoverySent()
	c.Mapper.Reset()
	if m, err := c.Mapper.RESTMapping(widget); err != nil || m.Resource.Resource != "widgets" {
		t.Fatalf("after Reset: %v %v", m, err)
	}
	if n := discoverySent(); n == 0 {
		t.Fatal("after Reset the server sent no discovery")
	}
}

// createWidgetCRD creates widgets.example.com and waits until the server serves it.
func createWidgetCRD(t *testing.T, cfg *rest.Config) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	dyn := dynamic.NewForConfigOrDie(cfg)
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(gvr).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := dc.ServerResourcesForGroupVersion("example.com/v1"); err == nil {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("the CRD is not served: %v", err)
		}
	}
}
