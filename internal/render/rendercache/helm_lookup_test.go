package rendercache

import (
	"context"
	"encoding/base64"
	"fmt"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/worker"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/testenv"
)

// keptSecret is grafana's pattern: the admin password is random on install and kept,
// through lookup, on every upgrade.
var keptSecret = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: grafana\nversion: 1.0.0\n",
	"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-admin
data:
  {{- $s := lookup "v1" "Secret" .Release.Namespace (printf "%s-admin" .Release.Name) }}
  {{- if $s }}
  password: {{ $s.data.password }}
  {{- else }}
  password: {{ randAlphaNum 10 | b64enc }}
  {{- end }}
`,
}

// TestHelmLookupReadsTheLiveClusterOnlyWhenAllowed installs the chart with Helm's own
// SDK, then renders it in a render worker: with lookup the password is the installed
// one (no diff), without it a new random one.
func TestHelmLookupReadsTheLiveClusterOnlyWhenAllowed(t *testing.T) {
	env := testenv.StartFor(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	var files []*loader.BufferedFile
	repoFiles := map[string]string{}
	for name, data := range keptSecret {
		files = append(files, &loader.BufferedFile{Name: name, Data: []byte(data)})
		repoFiles["charts/grafana/"+name] = data
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	ns := "default"
	flags.KubeConfig, flags.Namespace = &env.Kubeconfig, &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = "grafana", ns
	if _, err := in.Run(ch, nil); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	live, err := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Secrets(ns).Get(ctx, "grafana-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	repo, err := gitfixture.Init(root)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.CommitFiles(repoFiles, "grafana")
	if err != nil {
		t.Fatal(err)
	}
	var told []any
	var toldMu sync.Mutex
	cache := &Cache{Worker: worker.New(ctx, root, render.DefaultLimits()), Secrets: SecretLookup{Reveal: true, Values: func(v ...any) {
		toldMu.Lock()
		defer toldMu.Unlock()
		told = append(told, v...)
	}}}
	cache.AllowLookup("test", env.Config)
	password := func(cache *Cache, lookup string) string {
		t.Helper()
		spec := render.Spec{Path: "charts/grafana", Renderer: render.RendererHelm, Helm: render.HelmOptions{ReleaseName: "grafana", ReleaseNamespace: ns, Lookup: lookup, Revision: 2}}
		res, err := cache.Render(commit, nil, spec)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) > 0 || len(res.Objects) != 1 {
			t.Fatalf("objects %d, failures %v", len(res.Objects), res.Failures)
		}
		p, _, _ := unstructured.NestedString(res.Objects[0].Get().Object, "data", "password")
		return p
	}
	want := string(live.Data["password"])
	if got := password(cache, "test"); got == "" || decode(t, got) != want {
		t.Errorf("with lookup, password = %q; helm install stored %q", got, want)
	}
	if !slices.Contains(told, any(want)) {
		t.Errorf("the scrubber was not told the password lookup handed the template: told %d values", len(told))
	}
	if got := password(cache, ""); got == "" || decode(t, got) == want {
		t.Errorf("without lookup, password = %q: it should be a new random one", got)
	}

	// A pull request's run: lookup finds the Secret, without its data.
	hidden := &Cache{Worker: worker.New(ctx, root, render.DefaultLimits())}
	hidden.AllowLookup("test", env.Config)
	spec := render.Spec{Path: "charts/grafana", Renderer: render.RendererHelm, Helm: render.HelmOptions{ReleaseName: "grafana", ReleaseNamespace: ns, Lookup: "test", Revision: 2}}
	res, err := hidden.Render(commit, nil, spec)
	if err != nil || len(res.Failures) > 0 || len(res.Objects) != 1 {
		t.Fatalf("render: %v %+v", err, res)
	}
	data, _, _ := unstructured.NestedMap(res.Objects[0].Get().Object, "data")
	if got, found := data["password"]; !found || (got != nil && got != "") {
		t.Errorf("without Reveal the template should read the key with no value: password %v (found %v)", got, found)
	}
	if !hidden.LookupHidSecrets("test") || cache.LookupHidSecrets("test") {
		t.Errorf("hid secrets: %v (pull request), %v (revealed)", hidden.LookupHidSecrets("test"), cache.LookupHidSecrets("test"))
	}
	if strings.Contains(fmt.Sprint(res.Objects[0].Get().Object), base64.StdEncoding.EncodeToString([]byte(want))) {
		t.Errorf("the live password reached the render")
	}
}

// TestLookupProxyHandsSecretsAsTold: a Secret and a list of Secrets through the
// proxy's response filter, data removed or each value told.
func TestLookupProxyHandsSecretsAsTold(t *testing.T) {
	t.Parallel()
	secret := `{"kind":"Secret","metadata":{"name":"s"},"data":{"password":"` + base64.StdEncoding.EncodeToString([]byte("hunter2-password")) + `"},"stringData":{"token":"tok-123456"}}`
	list := `{"kind":"SecretList","items":[` + secret + `]}`
	for _, c := range []struct {
		path, body string
	}{{"/api/v1/namespaces/default/secrets/s", secret}, {"/api/v1/namespaces/default/secrets", list}, {"/api/v1/secrets", list}} {
		for _, reveal := range []bool{false, true} {
			var told []any
			s := SecretLookup{Reveal: reveal, Values: func(v ...any) { told = append(told, v...) }}
			req := httptest.NewRequest("GET", c.path, nil)
			resp := &http.Response{StatusCode: 200, Header: http.Header{}, Request: req, Body: io.NopCloser(strings.NewReader(c.body))}
			if err := s.filter(resp); err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			has := strings.Contains(string(out), "tok-123456") || strings.Contains(string(out), base64.StdEncoding.EncodeToString([]byte("hunter2-password")))
			if has != reveal || !strings.Contains(string(out), `"password":`) {
				t.Errorf("%s reveal=%v: data handed on = %v: %s", c.path, reveal, has, out)
			}
			if reveal && (!slices.Contains(told, any("hunter2-password")) || !slices.Contains(told, any("tok-123456"))) {
				t.Errorf("%s: told %q", c.path, told)
			}
			if !strings.Contains(string(out), `"name":"s"`) {
				t.Errorf("%s: the Secret itself is gone: %s", c.path, out)
			}
		}
	}
	// Not Secrets: untouched.
	req := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/c", nil)
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Request: req, Body: io.NopCloser(strings.NewReader(`{"data":{"a":"b"}}`))}
	if err := (SecretLookup{}).filter(resp); err != nil {
		t.Fatal(err)
	}
	if out, _ := io.ReadAll(resp.Body); string(out) != `{"data":{"a":"b"}}` {
		t.Errorf("a ConfigMap was changed: %s", out)
	}
}

func decode(t *testing.T, b64 string) string {
	t.Helper()
	s, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}
