package dryrun

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// requestLog is a round-tripper that records the method and path of every request
// the clients send.
type requestLog struct {
	mu   sync.Mutex
	sent []string
}

func (l *requestLog) count(method, pathPart string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.sent {
		if strings.HasPrefix(s, method+" ") && strings.Contains(s, pathPart) {
			n++
		}
	}
	return n
}

// loggedClients are clients of the test API server whose requests l records and
// whose waits between retries are recorded in waits, not slept.
func loggedClients(t *testing.T, l *requestLog, waits *[]time.Duration) *kube.Clients {
	t.Helper()
	cfg := rest.CopyConfig(testEnv(t).Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			l.mu.Lock()
			l.sent = append(l.sent, r.Method+" "+r.URL.Path)
			l.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	c, err := kube.NewClients(cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		*waits = append(*waits, d)
		return ctx.Err()
	}
	return c
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func secret(name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     data,
	}}
}

const notBase64Value = "s3cr3t not base64!"

// TestBytesThatAreNotBase64AreInvalidAndNeverSent: a Secret whose data, or a
// ConfigMap whose binaryData, holds a value that is not base64 is invalid, naming
// the key and not the value, without a request for it; base64 the server decodes
// (line-wrapped, as base64 writes it by default) is sent and previewed.
func TestBytesThatAreNotBase64AreInvalidAndNeverSent(t *testing.T) {
	log := &requestLog{}
	var waits []time.Duration
	c := loggedClients(t, log, &waits)
	objs := []render.Object{
		{Obj: secret("bad-base64", map[string]any{"password": notBase64Value, "user": "YWRtaW4=", "token": "YWJj"}), Source: "secret.yaml", Doc: 1},
		{Obj: secret("two-bad", map[string]any{"b": "=abc", "a": "YWJ"}), Source: "secret.yaml", Doc: 2},
		{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata":   map[string]any{"name": "bad-binary", "namespace": "default"},
			"binaryData": map[string]any{"blob": "not base64"}, "data": map[string]any{"text": "not base64 is fine here"},
		}}, Source: "cm.yaml", Doc: 1},
		{Obj: secret("wrapped-base64", map[string]any{"password": "cGFzc3dv\ncmQtdGhhdC1pcy1sb25n\n"}), Source: "ok.yaml", Doc: 1},
	}
	res := Run(context.Background(), c, objs, Options{Applier: kubectlssa.New(), FieldManager: "drift-test", RequestTimeout: 10 * time.Second})

	wantReason(t, res[0], reason.Invalid, "data.password is not valid base64", "a Secret's data must be base64", "It was not sent", "stringData")
	if strings.Contains(res[0].Err.Message, "data.user") || strings.Contains(res[0].Err.Message, "data.token") || strings.Contains(res[0].Err.Message, notBase64Value) {
		t.Errorf("the message names valid keys or quotes the value: %s", res[0].Err.Message)
	}
	wantReason(t, res[1], reason.Invalid, "data.a, data.b are not valid base64")
	wantReason(t, res[2], reason.Invalid, "binaryData.blob is not valid base64", "a ConfigMap's binaryData")
	if res[3].Err != nil || res[3].Merged == nil {
		t.Errorf("line-wrapped base64: %+v", res[3].Err)
	}
	for _, name := range []string{"bad-base64", "two-bad"} {
		if n := log.count("", "/secrets/"+name); n != 0 {
			t.Errorf("%d requests for Secret %s, want none", n, name)
		}
	}
	if n := log.count("", "/configmaps/bad-binary"); n != 0 {
		t.Errorf("%d requests for the ConfigMap, want none", n)
	}
	if n := log.count(http.MethodPatch, "/secrets/wrapped-base64"); n != 1 {
		t.Errorf("%d PATCHes of the valid Secret, want 1", n)
	}
}

// TestAnObjectTheServerCannotConvertIsInvalidAndSentOnce: server-side apply answers
// 500 "failed to convert new object" to a value it cannot convert to the field's
// type. That is the object's fault: reason invalid at the first answer, no retry.
// The real server's answer, to a Secret sent past drift's own check and to a
// webhook configuration's caBundle, which drift does not check.
func TestAnObjectTheServerCannotConvertIsInvalidAndSentOnce(t *testing.T) {
	log := &requestLog{}
	var waits []time.Duration
	c := loggedClients(t, log, &waits)
	opts := Options{Applier: kubectlssa.New(), FieldManager: "drift-test", RequestTimeout: 10 * time.Second}

	results := Plan(c, []render.Object{{Obj: secret("unconvertible", map[string]any{"password": notBase64Value}), Source: "secret.yaml", Doc: 1}}, opts)
	if results[0].Err == nil || !strings.Contains(results[0].Err.Message, "data.password") {
		t.Fatalf("planned: %+v, want the check's error", results[0].Err)
	}
	results[0].Err = nil // past the check: the server decides
	Send(context.Background(), c, results, opts)
	wantReason(t, results[0], reason.Invalid, "cannot convert this object to its type", "not valid base64", "failed to convert new object", "illegal base64 data")
	if strings.Contains(results[0].Err.Message, notBase64Value) {
		t.Errorf("the value in the message: %s", results[0].Err.Message)
	}
	if n := log.count(http.MethodPatch, "/secrets/unconvertible"); n != 1 {
		t.Errorf("%d PATCHes, want 1", n)
	}

	hook := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "bad-cabundle"},
		"webhooks": []any{map[string]any{
			"name": "check.drift.test", "sideEffects": "None", "admissionReviewVersions": []any{"v1"},
			"clientConfig": map[string]any{"url": "https://hook.drift.test/check", "caBundle": "not a bundle"},
		}},
	}}
	r := previewObject(t, c, hook)
	wantReason(t, r, reason.Invalid, "cannot convert this object to its type", "caBundle", "failed to convert new object")
	if n := log.count(http.MethodPatch, "/validatingwebhookconfigurations/bad-cabundle"); n != 1 {
		t.Errorf("%d PATCHes of the webhook configuration, want 1", n)
	}
	if len(waits) != 0 {
		t.Errorf("waited %v between retries, want no retry", waits)
	}
}
