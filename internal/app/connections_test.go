package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/testenv"
)

// TestDiscoveryAndThePreviewShareTheRunsConnection: what discovery reads from a live
// cluster (an Argo CD cluster Secret, a ConfigMap a Flux substitution names) and
// what the preview connects to come from one connection per cluster, made through
// Config.Connect (which tells the scrubber the connection's credentials, and whose
// clients carry kube's retry policy); the cluster Secret's values reach the scrubber.
func TestDiscoveryAndThePreviewShareTheRunsConnection(t *testing.T) {
	env := testenv.StartFor(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets("argocd").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: map[string]string{"name": "prod", "server": "https://prod.example:6443", "config": `{"bearerToken":"tok-8f3e2a9c41"}`}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-settings"}, Data: map[string]string{"DOMAIN": "lab.example"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	cfg := NewConfig(&out, &errOut)
	connects := 0
	cfg.Connect = func(ctx context.Context, _ *genericclioptions.ConfigFlags, n int, credential func(...string)) (*kube.Connection, error) {
		connects++
		c, err := kube.NewClientsWithin(ctx, env.Config, n)
		if err != nil {
			return nil, err
		}
		return &kube.Connection{Clients: c}, nil
	}
	o := &Run{Concurrency: 4}
	o.cfg = cfg
	o.scrub = o.newScrubber()
	o.conns.bind(ctx)
	key := plan.ClusterKey{Context: "prod"}

	// Discovery connects first, from a context that ends with it (the base's
	// discovery): the connection lives on with the run's.
	discovery, endDiscovery := context.WithCancel(ctx)
	clusters, err := o.argoClusters(discovery, key, "", "argocd")
	endDiscovery()
	if err != nil || len(clusters) != 1 || clusters[0].Server != "https://prod.example:6443" {
		t.Fatalf("argoClusters: %v, %+v", err, clusters)
	}
	if !o.scrub.Holds(`{"bearerToken":"tok-8f3e2a9c41"}`) {
		t.Error("the cluster Secret's config is not told to the scrubber")
	}
	cm, err := o.liveObject(ctx, key, "", "ConfigMap", "default", "cluster-settings")
	if err != nil || cm == nil || cm.GetKind() != "ConfigMap" || !strings.Contains(cm.Object["data"].(map[string]any)["DOMAIN"].(string), "lab.example") {
		t.Fatalf("liveObject: %v, %+v", err, cm)
	}
	missing, err := o.liveObject(ctx, key, "", "Secret", "default", "nothing-here")
	if err != nil || missing != nil {
		t.Errorf("a missing Secret: %v, %+v", err, missing)
	}
	live, ok := o.previewDeps(nil, nil, "", nil, nil).Clusters.(preview.Live)
	if !ok {
		t.Fatalf("without --cluster ephemeral the run's clusters are %T, want preview.Live", o.previewDeps(nil, nil, "", nil, nil).Clusters)
	}
	if _, ok := o.clusters(ephemeralCluster).(preview.Ephemeral); !ok {
		t.Errorf("with --cluster ephemeral the run's clusters are %T, want preview.Ephemeral", o.clusters(ephemeralCluster))
	}
	conn, err := live.Connect(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Clients.Reachable(ctx); err != nil {
		t.Errorf("the preview's connection ended with discovery: %v", err)
	}
	if connects != 1 {
		t.Errorf("Config.Connect was called %d times for one cluster, want 1", connects)
	}
	if _, err := o.connect(ctx, plan.ClusterKey{Context: "staging"}, ""); err != nil || connects != 2 {
		t.Errorf("another cluster: %v, %d connections", err, connects)
	}
}

// A Go program gets drift diff's report from Config.Diff, with nothing written nor
// published; Config.Publish then writes it as drift diff does and returns the Exit
// it calls for.
func TestDiffReturnsTheReportAndPublishWritesIt(t *testing.T) {
	env := testenv.StartFor(t)
	var out, errOut bytes.Buffer
	cfg := NewConfig(&out, &errOut)
	cache := t.TempDir()
	cfg.Getenv = func(k string) string {
		if k == "DRIFT_CACHE_DIR" {
			return cache
		}
		return ""
	}
	cfg.Connect = func(ctx context.Context, _ *genericclioptions.ConfigFlags, n int, _ func(...string)) (*kube.Connection, error) {
		c, err := kube.NewClientsWithin(ctx, env.Config, n)
		if err != nil {
			return nil, err
		}
		return &kube.Connection{Clients: c, Namespace: "default"}, nil
	}
	o := &Diff{Run: Run{Repo: workTree(t), Output: "text", Concurrency: 4, MaxTargets: 10, RenderLimits: limits, Timeout: 1 << 40, Prune: true,
		Report: Report{Color: "never", Unified: 3}, Given: func(string) bool { return false }}, ConfigFrom: plan.ConfigFromBase}
	rep, err := cfg.Diff(context.Background(), o)
	if err != nil || rep == nil || !rep.Complete || rep.Summary.Add != 1 {
		t.Fatalf("Diff: %v, %+v\n%s", err, rep, errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("Diff wrote the report itself:\n%s", out.String())
	}
	if err := cfg.Publish(context.Background(), &o.Run, nil, nil); err == nil || out.Len() != 0 {
		t.Errorf("Publish of no report: %v, wrote %q", err, out.String())
	}
	var exit Exit
	if err := cfg.Publish(context.Background(), &o.Run, rep, nil); !errors.As(err, &exit) || exit != Changes {
		t.Errorf("Publish: %v, want exit %d", err, Changes)
	}
	if !strings.Contains(out.String(), "ConfigMap default/web") {
		t.Errorf("Publish did not write the report:\n%s", out.String())
	}
}
