package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/report"
)

// webhookServer answers AdmissionReviews over TLS: it denies ConfigMaps named
// "denied-*" and waits past its timeout for those named "slow-*".
func webhookServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		switch {
		case strings.HasPrefix(review.Request.Name, "denied-"):
			resp.Allowed = false
			resp.Result = &metav1.Status{Message: "configmaps named denied-* are not allowed here"}
		case strings.HasPrefix(review.Request.Name, "slow-"):
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		}
		review.Response = resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAdmissionWebhooksThatBlockThePreview registers three validating webhooks on one
// namespace: one that denies, one whose server is gone (failurePolicy Fail), one that
// answers too late. Each blocked object gets its own reason; the others go on.
func TestAdmissionWebhooksThatBlockThePreview(t *testing.T) {
	ns := namespace(t)
	srv := webhookServer(t)
	gone := httptest.NewTLSServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close() // nothing listens there any more
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	hook := func(name, url, objectName string, timeout int) string {
		// NS first: the CA's base64 may contain those letters.
		return strings.NewReplacer("NAME", name, "URL", url, "CABUNDLE", ca, "OBJ", objectName, "TIMEOUT", string(rune('0'+timeout))).Replace(sub(`
  - name: NAME
    clientConfig: {url: "URL/validate", caBundle: CABUNDLE}
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: TIMEOUT
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
    objectSelector: {matchLabels: {hook: OBJ}}
    rules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}`, ns))
	}
	apply(t, "kubectl", "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: drift-test-"+ns+"}\nwebhooks:"+
		hook("deny.drift.test", srv.URL, "deny", 5)+hook("gone.drift.test", goneURL, "gone", 5)+hook("slow.drift.test", srv.URL, "slow", 1)+"\n")

	cm := func(name, label string) string {
		return sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: NS, labels: {hook: "+label+"}}\ndata: {a: b}\n", ns)
	}
	r := repo(t, map[string]string{
		"denied.yaml": cm("denied-settings", "deny"),
		"gone.yaml":   cm("settings", "gone"),
		"slow.yaml":   cm("slow-settings", "slow"),
		"fine.yaml":   cm("allowed-settings", "deny"),
		"svc.yaml":    sub("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: NS}\nspec: {ports: [{port: 80}]}\n", ns),
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 2 || rep.Complete {
		t.Fatalf("exit %d complete %v\n%s", o.code, rep.Complete, o.stderr)
	}
	for _, c := range []struct{ name, reason, text string }{
		{"denied-settings", "webhook-denied", "admission webhook deny.drift.test denies this object"},
		{"settings", "webhook-unavailable", "admission webhook gone.drift.test could not be reached"},
		{"slow-settings", "webhook-unavailable", "admission webhook slow.drift.test did not answer in time"},
	} {
		ob := find(t, rep, "ConfigMap", c.name)
		if ob.Category != report.Error || string(ob.ErrorReason) != c.reason || !strings.Contains(ob.Error, c.text) {
			t.Errorf("%s: %s %s %q", c.name, ob.Category, ob.ErrorReason, ob.Error)
		}
	}
	if ob := find(t, rep, "ConfigMap", "allowed-settings"); ob.Category != report.Add {
		t.Errorf("allowed configmap: %s %s", ob.Category, ob.Error)
	}
	if ob := find(t, rep, "Service", "web"); ob.Category != report.Add {
		t.Errorf("service: %s %s", ob.Category, ob.Error)
	}
}

// TestAggregatedAPIsAreNotSentUnlessAllowed registers an APIService backed by a
// service (its server need not run): objects of its group are held back with their own
// reason, and sent when the target allows it.
func TestAggregatedAPIsAreNotSentUnlessAllowed(t *testing.T) {
	ns := namespace(t)
	group := fmt.Sprintf("metrics%d.example.com", nsCounter.Add(1))
	apply(t, "kubectl", strings.ReplaceAll(sub(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.GROUP}
spec:
  group: GROUP
  version: v1beta1
  service: {namespace: NS, name: metrics-server, port: 443}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
`, ns), "GROUP", group))
	// An unavailable aggregated API makes discovery partial for every later test: remove it.
	t.Cleanup(func() {
		gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
		_ = dynamic.NewForConfigOrDie(env.Config).Resource(gvr).Delete(context.Background(), "v1beta1."+group, metav1.DeleteOptions{})
	})
	files := map[string]string{
		"drift.yaml": "targets:\n  - {name: app, path: app, namespace: " + ns + "}\n",
		"app/m.yaml": "apiVersion: " + group + "/v1beta1\nkind: NodeMetrics\nmetadata: {name: n1}\n",
		"app/c.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
	}
	r := repo(t, files)
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	m := find(t, rep, "NodeMetrics", "n1")
	if o.code != 2 || m.ErrorReason != "aggregated-api" || !strings.Contains(m.Error, "served by an aggregated API server (service "+ns+"/metrics-server)") {
		t.Fatalf("exit %d: %s %q", o.code, m.ErrorReason, m.Error)
	}
	if c := find(t, rep, "ConfigMap", "plain"); c.Category != report.Add {
		t.Errorf("configmap: %s", c.Category)
	}
	files["drift.yaml"] = "targets:\n  - {name: app, path: app, namespace: " + ns + ", dryRunAggregatedAPIs: true}\n"
	if _, err := r.CommitFiles(files, "allow"); err != nil {
		t.Fatal(err)
	}
	rep, _ = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if m := find(t, rep, "NodeMetrics", "n1"); m.ErrorReason == "aggregated-api" {
		t.Errorf("allowed, yet held back: %q", m.Error)
	}
}
