package kube_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/testenv"
)

// TestTheTypedClientsFollowTheOneRetryPolicy: the Secrets Helm's release storage
// reads and the metadata LISTs the dry-run cache reads go through Retry, not
// client-go's own retries: a 429 with Retry-After is waited out with Clients.Sleep
// (which a test records) and sent again once; the Secrets refuse every write before
// anything is sent.
func TestTheTypedClientsFollowTheOneRetryPolicy(t *testing.T) {
	env := testenv.StartFor(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().Secrets("default").Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.web.v1", Labels: map[string]string{"owner": "helm"}},
		StringData: map[string]string{"release": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rp, err := env.ReverseProxy()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var accept []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		mu.Lock()
		seen[key]++
		n := seen[key]
		if strings.HasSuffix(r.URL.Path, "/configmaps") {
			accept = append(accept, r.Header.Get("Accept"))
		}
		mu.Unlock()
		if n == 1 && r.Method == http.MethodGet {
			w.Header().Set("Retry-After", "2")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":2}}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	c, err := kube.NewClients(&rest.Config{Host: proxy.URL}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	ctx := context.Background()

	secrets, err := c.Secrets(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	list, err := secrets.List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("List: %v, %+v", err, list)
	}
	if _, err := secrets.Get(t.Context(), "sh.helm.release.v1.web.v1", metav1.GetOptions{}); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if _, err := secrets.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !errors.Is(err, kube.ErrReadOnly) {
		t.Errorf("Create: %v, want ErrReadOnly", err)
	}
	if err := secrets.Delete(t.Context(), "sh.helm.release.v1.web.v1", metav1.DeleteOptions{}); !errors.Is(err, kube.ErrReadOnly) {
		t.Errorf("Delete: %v, want ErrReadOnly", err)
	}
	if _, err := secrets.Apply(t.Context(), corev1ac.Secret("x", "default"), metav1.ApplyOptions{FieldManager: "t"}); !errors.Is(err, kube.ErrReadOnly) {
		t.Errorf("Apply: %v, want ErrReadOnly", err)
	}

	page, err := c.ListMetadata(ctx, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, metav1.ListOptions{Limit: 500})
	if err != nil || len(page.Items) == 0 || page.Items[0].Name == "" {
		t.Fatalf("ListMetadata: %v, %+v", err, page)
	}

	mu.Lock()
	defer mu.Unlock()
	for key, n := range map[string]int{
		"GET /api/v1/namespaces/default/secrets":                           2,
		"GET /api/v1/namespaces/default/secrets/sh.helm.release.v1.web.v1": 2,
		"GET /api/v1/configmaps":                                           2,
	} {
		if seen[key] != n {
			t.Errorf("%s: sent %d times, want %d (one 429, then once more)", key, seen[key], n)
		}
	}
	for key := range seen {
		if !strings.HasPrefix(key, "GET ") {
			t.Errorf("a write reached the server: %s", key)
		}
	}
	if len(waits) != 3 || waits[0] != 2*time.Second || waits[1] != 2*time.Second || waits[2] != 2*time.Second {
		t.Errorf("waits %v, want the server's 2s three times, through Clients.Sleep", waits)
	}
	if len(accept) == 0 || !strings.Contains(accept[0], "as=PartialObjectMetadataList") {
		t.Errorf("the metadata LIST asked for %q", accept)
	}
}
