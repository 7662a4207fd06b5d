package main

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Values that must reach no output, in any form.
const (
	secretToken    = "ghs_trustSecretsToken0123456789abcdef"
	secretLive     = "live-only-password-7431"
	secretRepo     = "repo-password-in-the-change-55"
	secretPin      = "98765432123"
	secretKeyLine  = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
	secretKeyLine2 = "second-line-of-the-key-0042"
)

var secretKey = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secretKeyLine + "\n" + secretKeyLine2 + "\n-----END OPENSSH PRIVATE KEY-----\n"

// quotingWebhook denies what carries the label hook=quote, quoting secrets as a
// careless policy would: a Secret's own values JSON-escaped, and for a ConfigMap the
// value of another Secret, raw, JSON-escaped and in base64, and the job's token in the
// base64 of a git credential.
func quotingWebhook(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		obj := &unstructured.Unstructured{}
		_ = json.Unmarshal(review.Request.Object.Raw, &obj.Object)
		var quoted []string
		if obj.GetKind() == "Secret" {
			data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
			for k, v := range data {
				dec, _ := base64.StdEncoding.DecodeString(v)
				esc, _ := json.Marshal(string(dec))
				quoted = append(quoted, k+" holds "+string(esc)+", starting "+strings.Split(string(dec), "\n")[1])
			}
		} else {
			esc, _ := json.Marshal(secretLive + "\n" + secretKey)
			quoted = append(quoted, "already used by Secret db: "+secretLive, string(esc), base64.StdEncoding.EncodeToString([]byte(secretLive)),
				"fetched with "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+secretToken)))
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Message: "policy refuses: " + strings.Join(quoted, "; ")}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// leaks lists the forms of the secret values found in out.
func leaks(out string) []string {
	var forms []string
	for _, v := range []string{secretToken, secretLive, secretRepo, secretPin, secretKeyLine, secretKeyLine2} {
		esc, _ := json.Marshal(v)
		forms = append(forms, v, base64.StdEncoding.EncodeToString([]byte(v)), string(esc[1:len(esc)-1]))
	}
	esc, _ := json.Marshal(secretKey)
	forms = append(forms, string(esc[1:len(esc)-1]), base64.StdEncoding.EncodeToString([]byte(secretKey)), strconv.Quote(secretKey))
	// The token's own characters in the credential's base64.
	cred := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + secretToken))
	forms = append(forms, cred[22:30])
	var found []string
	for _, f := range forms {
		if strings.Contains(out, f) {
			found = append(found, f)
		}
	}
	return found
}

// filesUnder concatenates every file under dir.
func filesUnder(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return err
	})
	return b.String()
}

// TestSecretValuesReachNoOutputInAnyForm is the attack on every way a secret can slip
// out: a number in a Secret's stringData that the server quotes back when it refuses
// it, a webhook quoting a Secret's multi-line value JSON-escaped, a webhook quoting in
// another object's denial a value drift read from the live cluster and the job's token
// in base64. Run as JSON, text, markdown, with --dump, the files published to GitHub
// and an external diff program: no form of any value appears on stdout, stderr or in
// any file, while each object still says why it failed.
func TestSecretValuesReachNoOutputInAnyForm(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", secretToken)
	ns := namespace(t)
	srv := quotingWebhook(t)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	apply(t, "kubectl", strings.NewReplacer("URL", srv.URL, "CABUNDLE", ca).Replace(sub(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: drift-test-NS}
webhooks:
- name: quote.drift.test
  clientConfig: {url: "URL/validate", caBundle: CABUNDLE}
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
  objectSelector: {matchLabels: {hook: quote}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps, secrets]}
`, ns)))
	apply(t, "kubectl", sub("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: NS}\nstringData: {password: "+secretLive+"}\n", ns))
	// An operator copied the live password into a ConfigMap the change edits: its diff
	// and dumped files show the live side.
	apply(t, "operator", sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: copy, namespace: NS}\ndata: {dsn: 'postgres://app:"+secretLive+"@db/app'}\n", ns))

	keyYAML := "    " + strings.ReplaceAll(strings.TrimSuffix(secretKey, "\n"), "\n", "\n    ")
	r := repo(t, map[string]string{
		"pin.yaml":  sub("apiVersion: v1\nkind: Secret\nmetadata: {name: pin, namespace: NS}\nstringData: {pin: "+secretPin+"}\n", ns),
		"key.yaml":  sub("apiVersion: v1\nkind: Secret\nmetadata: {name: ssh, namespace: NS, labels: {hook: quote}}\nstringData:\n  id: |\n", ns) + keyYAML + "\n",
		"db.yaml":   sub("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: NS}\nstringData: {password: "+secretRepo+"}\n", ns),
		"copy.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: copy, namespace: NS}\ndata: {color: blue}\n", ns),
		"cm.yaml":   sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS, labels: {hook: quote}}\ndata: {color: blue}\n", ns),
	})

	files := t.TempDir()
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--dump", filepath.Join(files, "dump"),
		"--json-report", filepath.Join(files, "report.json"), "--comment-file", filepath.Join(files, "comment.md"), "--step-summary", filepath.Join(files, "summary.md"))
	if o.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
	}
	for _, c := range []struct{ kind, name, category, reason, text string }{
		{"Secret", "pin", "error", "invalid", ".stringData.pin: expected string, got a number"},
		{"Secret", "ssh", "error", "webhook-denied", `policy refuses: id holds "***", starting ***`},
		{"ConfigMap", "settings", "error", "webhook-denied", `already used by Secret db: ***; "***\n***"; ***; fetched with eC1hY2Nlc3MtdG9rZW46***`},
		{"Secret", "db", "modify", "", ""},
		{"ConfigMap", "copy", "modify", "", ""},
	} {
		ob := find(t, rep, c.kind, c.name)
		if ob.Category != c.category || string(ob.ErrorReason) != c.reason || !strings.Contains(ob.Error, c.text) {
			t.Errorf("%s %s: %s %s %q, want %s %s with %q", c.kind, c.name, ob.Category, ob.ErrorReason, ob.Error, c.category, c.reason, c.text)
		}
	}
	if c := find(t, rep, "ConfigMap", "copy"); !strings.Contains(c.Diff, " dsn: postgres://app:***@db/app") {
		t.Errorf("the copied password is not scrubbed from the diff:\n%s", c.Diff)
	}
	if b, _ := os.ReadFile(filepath.Join(files, "dump", "live", "v1.ConfigMap."+ns+".copy")); !strings.Contains(string(b), "dsn: postgres://app:***@db/app") {
		t.Errorf("the copied password is not scrubbed from the dumped file:\n%s", b)
	}
	outputs := map[string]string{"json stdout": o.stdout, "json stderr": o.stderr, "files": filesUnder(t, files)}
	for _, format := range []string{"text", "markdown"} {
		o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "-o", format, "--show-unchanged")
		outputs[format+" stdout"], outputs[format+" stderr"] = o.stdout, o.stderr
	}
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "diff -ru")
	o = drift(t, "diff", "--repo", r.Dir, "--ref", "main")
	if !strings.Contains(o.stdout, "Diff from KUBECTL_EXTERNAL_DIFF") {
		t.Errorf("the external diff did not run:\n%s\n%s", o.stdout, o.stderr)
	}
	outputs["external diff stdout"], outputs["external diff stderr"] = o.stdout, o.stderr
	for name, out := range outputs {
		if found := leaks(out); len(found) > 0 {
			t.Errorf("%s shows %q", name, found)
		}
	}
}

// TestASecretWhoseDataIsNotBase64IsInvalid: a Secret whose data holds a value that is
// not base64, which server-side apply answers with a 500, is an invalid object
// naming the key, for every applier (kubectl's client-side patch would have the
// server quote the whole object back), and the run exits 2 without retrying it as
// an unavailable server; the value reaches no output.
func TestASecretWhoseDataIsNotBase64IsInvalid(t *testing.T) {
	ns := namespace(t)
	const value = "repo-value-that-is-not-base64!"
	r := repo(t, map[string]string{
		"secret.yaml": sub("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: NS}\ndata: {password: '"+value+"', user: YWRtaW4=}\n", ns),
		"cm.yaml":     sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS}\ndata: {color: blue}\n", ns),
	})
	for _, applier := range []string{"kubectl-server-side", "kubectl"} {
		t.Run(applier, func(t *testing.T) {
			rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--applier", applier)
			if o.code != 2 {
				t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
			}
			s := find(t, rep, "Secret", "db")
			if s.Category != "error" || s.ErrorReason != "invalid" || !strings.Contains(s.Error, "data.password is not valid base64") || strings.Contains(s.Error, "data.user") {
				t.Errorf("Secret: %s %s %q, want an invalid error naming data.password", s.Category, s.ErrorReason, s.Error)
			}
			if c := find(t, rep, "ConfigMap", "settings"); c.Category != "add" {
				t.Errorf("ConfigMap: %s %s %q", c.Category, c.ErrorReason, c.Error)
			}
			text := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--applier", applier, "-o", "text")
			if text.code != 2 || !strings.Contains(text.stdout+text.stderr, "data.password is not valid base64") {
				t.Errorf("text: exit %d\n%s\n%s", text.code, text.stdout, text.stderr)
			}
			for name, out := range map[string]string{"json stdout": o.stdout, "json stderr": o.stderr, "text stdout": text.stdout, "text stderr": text.stderr} {
				if strings.Contains(out, value) || strings.Contains(out, "unavailable") {
					t.Errorf("%s shows the value or calls the server unavailable:\n%s", name, out)
				}
			}
		})
	}
}
