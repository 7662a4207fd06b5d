package app

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
)

// workTree is a git repository with one manifest committed, read as the work tree (no --ref).
func workTree(t *testing.T) string {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: default\ndata:\n  color: blue\n"
	if _, err := r.CommitFiles(map[string]string{"web.yaml": manifest}, "web"); err != nil {
		t.Fatal(err)
	}
	return r.Dir
}

// limits are the render flags' defaults.
var limits = render.LimitSettings{Timeout: render.DefaultTimeout, Memory: "1Gi", Output: "64Mi", Objects: render.DefaultObjects}

// seamConfig is a Config whose connections are t's: connect answers err, and
// starting an ephemeral server fails the test.
func seamConfig(t *testing.T, out, errOut *bytes.Buffer, connect func() error) *Config {
	cfg := NewConfig(out, errOut)
	cache := t.TempDir()
	cfg.Getenv = func(k string) string {
		if k == "DRIFT_CACHE_DIR" {
			return cache
		}
		return ""
	}
	cfg.Connect = func(context.Context, *genericclioptions.ConfigFlags, int, func(...string)) (*kube.Connection, error) {
		return nil, connect()
	}
	cfg.StartEphemeral = func(context.Context, func(string) string, *cachedir.Dir, int) (*kube.Connection, func(), error) {
		t.Error("an ephemeral server was started")
		return nil, nil, errors.New("no")
	}
	return cfg
}

// drift targets lists what a run would preview without reaching any cluster.
func TestTargetsConnectsToNothing(t *testing.T) {
	var out, errOut bytes.Buffer
	cfg := seamConfig(t, &out, &errOut, func() error { t.Error("Targets connected to a cluster"); return errors.New("no") })
	o := &Run{Repo: workTree(t), Output: "text", MaxTargets: 10, RenderLimits: limits}
	if err := cfg.Targets(context.Background(), o, ""); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "plain") {
		t.Errorf("no target listed:\n%s", out.String())
	}
}

// A cluster that cannot be reached fails the run (cmd/drift exits 2 with the error),
// naming why, and no report claims there are no changes.
func TestDiffUnreachableClusterIsAnError(t *testing.T) {
	var out, errOut bytes.Buffer
	cfg := seamConfig(t, &out, &errOut, func() error { return errors.New("dial tcp 10.0.0.1:6443: connection refused") })
	o := &Diff{Run: Run{Repo: workTree(t), Output: "text", Concurrency: 4, MaxTargets: 10, RenderLimits: limits, Timeout: 1 << 40, Prune: true,
		Report: Report{Color: "never", Unified: 3}, Given: func(string) bool { return false }}, ConfigFrom: plan.ConfigFromBase}
	rep, err := cfg.Diff(context.Background(), o)
	err = cfg.Publish(context.Background(), &o.Run, rep, err)
	var exit Exit
	if err == nil || (errors.As(err, &exit) && exit != Errors) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	if strings.Contains(strings.ToLower(out.String()), "no changes") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

// drift targets plans as diff does (openPlan): what discovery read of the
// repository's files is kept in the cache directory for the next run.
func TestTargetsRemembersWhatDiscoveryRead(t *testing.T) {
	var out, errOut bytes.Buffer
	cfg := seamConfig(t, &out, &errOut, func() error { t.Error("Targets connected to a cluster"); return errors.New("no") })
	o := &Run{Repo: workTree(t), Ref: "HEAD", Output: "text", MaxTargets: 10, RenderLimits: limits}
	if err := cfg.Targets(context.Background(), o, ""); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	scans, _ := filepath.Glob(filepath.Join(cfg.Getenv("DRIFT_CACHE_DIR"), "*", "*", "scans", "*"))
	if len(scans) != 1 {
		t.Errorf("what discovery read was not kept: %q", scans)
	}
}
