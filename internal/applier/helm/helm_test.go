package helm

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"testing"
	"testing/fstest"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	helmkube "helm.sh/helm/v3/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/testenv"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// shared is the API server this package's tests share, started by the first test
// that needs it.
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &shared)) }

func testEnv(t testing.TB) *testenv.Env {
	t.Helper()
	return shared.Env(t)
}

var (
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// helmChart is a chart both as drift reads it (a repository) and as Helm loads it.
type helmChart map[string]string

func (c helmChart) fs() fstest.MapFS {
	m := fstest.MapFS{}
	for name, data := range c {
		m["chart/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

func (c helmChart) load(t *testing.T) *chart.Chart {
	t.Helper()
	var files []*loader.BufferedFile
	for name, data := range c {
		files = append(files, &loader.BufferedFile{Name: name, Data: []byte(data)})
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// helmActions is the Helm SDK's own configuration against the test API server, in
// namespace ns, writing as the helm CLI does.
func helmActions(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	helmkube.ManagedFieldsManager = FieldManager
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &testEnv(t).Kubeconfig
	flags.Namespace = &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func helmNamespace(t *testing.T) string {
	t.Helper()
	ns := "helm-" + rand.String(6)
	cs := kubernetes.NewForConfigOrDie(testEnv(t).Config)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

func helmInstall(t *testing.T, ns, name string, c helmChart, vals map[string]any) {
	t.Helper()
	in := action.NewInstall(helmActions(t, ns))
	in.ReleaseName, in.Namespace = name, ns
	if _, err := in.Run(c.load(t), vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
}

func helmUpgrade(t *testing.T, ns, name string, c helmChart, vals map[string]any) {
	t.Helper()
	up := action.NewUpgrade(helmActions(t, ns))
	up.Namespace = ns
	if _, err := up.Run(name, c.load(t), vals); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
}

// helmRender is drift's rendering of the chart, as a release in ns.
func helmRender(t *testing.T, c helmChart, ns, name string, vals map[string]any) []render.Object {
	t.Helper()
	res, err := render.Render(c.fs(), render.Spec{Path: "chart", Renderer: render.RendererHelm,
		Helm: render.HelmOptions{ReleaseName: name, ReleaseNamespace: ns, Values: vals}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("render failures: %v", res.Failures)
	}
	return res.Objects
}

func helmResource(t *testing.T, c *kube.Clients, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gvk := u.GroupVersionKind()
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	return c.Dynamic.Resource(m.Resource).Namespace(u.GetNamespace())
}

func liveOf(t *testing.T, res dynamic.ResourceInterface, name string) *unstructured.Unstructured {
	t.Helper()
	live, err := res.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// comparableHelm drops what every write changes, whoever writes.
func comparableHelm(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	c.SetGeneration(0)
	// A dry-run create gives the object an identity of its own.
	c.SetUID("")
	c.SetCreationTimestamp(metav1.Time{})
	return c.Object
}

var blockChart = helmChart{
	"Chart.yaml": "apiVersion: v2\nname: cache\nversion: 1.0.0\n",
	"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-conf
data:
  redis.conf: |
    maxmemory {{ .Values.maxMemory }}
    appendonly yes
`,
}

func TestHelmBlockScalarEndingADocumentKeepsItsNewlineAsHelmApplies(t *testing.T) {
	ns := helmNamespace(t)
	vals := map[string]any{"maxMemory": "64mb"}
	helmInstall(t, ns, "cache", blockChart, vals)
	objs := helmRender(t, blockChart, ns, "cache", vals)
	if len(objs) != 1 {
		t.Fatalf("objects = %d", len(objs))
	}
	live, err := kubernetes.NewForConfigOrDie(testEnv(t).Config).CoreV1().ConfigMaps(ns).Get(context.Background(), "cache-conf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(objs[0].Get().Object, "data", "redis.conf")
	if want := live.Data["redis.conf"]; got != want {
		t.Errorf("drift renders redis.conf %q, helm install stored %q", got, want)
	}
}

var appChart = helmChart{
	"Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n",
	"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
{{- range $k, $v := .Values.settings }}
  {{ $k }}: {{ $v | quote }}
{{- end }}
`,
	"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
      - name: app
        image: registry.example/app:{{ .Values.tag }}
        env:
{{- range .Values.env }}
        - {name: {{ . }}, value: "on"}
{{- end }}
`,
	"crds/widgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.helmtest.drift.test}
spec:
  group: helmtest.drift.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
	"templates/widget.yaml": `apiVersion: helmtest.drift.test/v1
kind: Widget
metadata:
  name: {{ .Release.Name }}
spec:
  size: {{ .Values.size }}
  {{- if .Values.color }}
  color: {{ .Values.color }}
  {{- end }}
`,
	"templates/added.yaml": `{{ if .Values.added }}apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-added
data: {y: "2"}
{{ end }}`,
	"templates/extra.yaml": `{{ if .Values.extra }}apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data: {x: "1"}
{{ end }}`,
}

func TestHelmUpgradePredictionEqualsWhatHelmUpgradeLeaves(t *testing.T) {
	ctx := context.Background()
	ns := helmNamespace(t)
	v1 := map[string]any{"settings": map[string]any{"a": "1", "b": "2"}, "env": []any{"A", "B"}, "tag": "1", "extra": true, "size": 1, "color": "red"}
	v2 := map[string]any{"settings": map[string]any{"a": "1"}, "env": []any{"A"}, "tag": "2", "extra": false, "size": 2, "added": true}
	helmInstall(t, ns, "app", appChart, v1)

	c, err := kube.NewClients(testEnv(t).Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Drift in the cluster since the install: a key added by hand (Helm's three-way
	// patch keeps it) and replicas scaled (Helm sets them back).
	dyn := c.Dynamic
	cmRes := dyn.Resource(cmGVR).Namespace(ns)
	if _, err := cmRes.Patch(ctx, "app-settings", "application/merge-patch+json", []byte(`{"data":{"manual":"kept"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deployRes := dyn.Resource(deployGVR).Namespace(ns)
	if _, err := deployRes.Patch(ctx, "app", "application/merge-patch+json", []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// A custom resource gets Helm's JSON merge patch, blind to live: the field added by
	// hand stays, the one dropped from the chart goes.
	widgetRes := dyn.Resource(schema.GroupVersionResource{Group: "helmtest.drift.test", Version: "v1", Resource: "widgets"}).Namespace(ns)
	if _, err := widgetRes.Patch(ctx, "app", "application/merge-patch+json", []byte(`{"spec":{"extra":"manual"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	rel, err := ReadRelease(kubernetes.NewForConfigOrDie(testEnv(t).Config).CoreV1().Secrets(ns), c.Mapper, ns, "app")
	if err != nil || rel == nil || rel.Revision != 1 || rel.NextRevision != 2 || len(rel.Objects) != 4 {
		t.Fatalf("release = %+v, %v", rel, err)
	}
	predicted := map[string]map[string]any{}
	var rendered []object.ID
	results := dryrun.Run(ctx, c, helmRender(t, appChart, ns, "app", v2), dryrun.Options{
		Applier: Upgrading(rel), Owner: applier.Owner{Name: "app", Namespace: ns}, Namespace: ns})
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %+v", r.ID.Display(), r.Err)
		}
		rendered = append(rendered, r.ID)
		if len(r.Warnings) > 0 && r.Warnings[0].Reason == reason.NotApplied {
			continue // the CRD of crds/, which an upgrade leaves alone
		}
		predicted[r.ID.String()] = comparableHelm(r.Merged)
	}
	var dropped []string
	for _, o := range rel.Dropped(rendered) {
		dropped = append(dropped, object.IDOf(o).String())
	}

	helmUpgrade(t, ns, "app", appChart, v2)

	for key, want := range predicted {
		u := &unstructured.Unstructured{Object: want}
		live := liveOf(t, helmResource(t, c, u), u.GetName())
		if live == nil {
			t.Errorf("%s: predicted, but not live after helm upgrade", key)
			continue
		}
		if got := comparableHelm(live); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: prediction differs from what helm upgrade left:\npredicted:\n%s\nlive:\n%s", key, toYAML(want), toYAML(got))
		}
	}
	settings, _, _ := unstructured.NestedStringMap(predicted["v1.ConfigMap."+ns+".app-settings"], "data")
	if _, ok := settings["b"]; ok || settings["manual"] != "kept" {
		t.Errorf("predicted settings = %v: the key dropped from values must go, the hand-made key stay", settings)
	}
	widget, _, _ := unstructured.NestedMap(predicted["helmtest.drift.test.v1.Widget."+ns+".app"], "spec")
	if _, ok := widget["color"]; ok || widget["extra"] != "manual" || widget["size"] != int64(2) {
		t.Errorf("predicted widget spec = %v", widget)
	}
	if _, ok := predicted["v1.ConfigMap."+ns+".app-added"]; !ok {
		t.Errorf("the object the upgrade creates is not predicted")
	}
	sort.Strings(dropped)
	if want := []string{"v1.ConfigMap." + ns + ".app-extra"}; !reflect.DeepEqual(dropped, want) {
		t.Errorf("dropped = %v, want %v", dropped, want)
	}
	if live := liveOf(t, cmRes, "app-extra"); live != nil {
		t.Errorf("app-extra still live after helm upgrade")
	}
}

func TestHelmOwnershipRefusesObjectsOfOthers(t *testing.T) {
	t.Parallel()
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "labels": map[string]any{"app.kubernetes.io/managed-by": "Helm"},
			"annotations": map[string]any{"meta.helm.sh/release-name": "other", "meta.helm.sh/release-namespace": "ns"}}}}
	err := CheckOwnership(live, "app", "ns")
	if err == nil || fmt.Sprint(err) == "" {
		t.Fatal("no error for another release's object")
	}
	SetMetadata(live, "app", "ns")
	if err := CheckOwnership(live, "app", "ns"); err != nil {
		t.Errorf("after SetMetadata: %v", err)
	}
}

func toYAML(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}
