package kube

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLookupProxyLetsOnlyReadsThrough: writes, watches, subresources, upgrades and
// requests without the token never reach the cluster.
func TestLookupProxyLetsOnlyReadsThrough(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, path string
		header       map[string]string
		want         string
	}{
		{"GET", "/api/v1/namespaces/default/secrets/x", nil, ""},
		{"GET", "/api/v1/namespaces/default/secrets", nil, ""},
		{"GET", "/apis/apps/v1", nil, ""},
		{"GET", "/apis/apps/v1/deployments", nil, ""},
		{"GET", "/api/v1/nodes/n", nil, ""},
		{"POST", "/api/v1/namespaces/default/secrets", nil, "POST refused"},
		{"DELETE", "/api/v1/namespaces/default/secrets/x", nil, "DELETE refused"},
		{"PATCH", "/api/v1/namespaces/default/secrets/x", nil, "PATCH refused"},
		{"GET", "/api/v1/namespaces/default/pods/p/log", nil, "path"},
		{"GET", "/api/v1/namespaces/default/pods/p/exec", nil, "path"},
		{"GET", "/api/v1/nodes/n/proxy", nil, "path"},
		{"GET", "/api/v1/watch/secrets", nil, "path"},
		{"GET", "/api/v1/secrets?watch=true", nil, "watch refused"},
		{"GET", "/api/v1/namespaces/default/pods/p", map[string]string{"Upgrade": "websocket"}, "upgrades refused"},
		{"GET", "/version", nil, "path"},
		{"GET", "/api/../healthz", nil, "path"},
	}
	for _, c := range cases {
		r, _ := http.NewRequest(c.method, "http://127.0.0.1"+c.path, nil)
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		got := lookupRefusal(r)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s %s: refusal %q, want %q", c.method, c.path, got, c.want)
		}
	}
	reached := 0
	h := readOnly("s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the proxy's token was forwarded upstream")
		}
	}))
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret"} {
		r := httptest.NewRequest("GET", "/api/v1/namespaces/default/secrets/x", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if want := auth == "Bearer s3cret"; (w.Code == http.StatusOK) != want {
			t.Errorf("Authorization %q: status %d", auth, w.Code)
		}
	}
	if reached != 1 {
		t.Errorf("upstream reached %d times, want 1 (only with the token)", reached)
	}
}
