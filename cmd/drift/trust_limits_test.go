package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/report"
)

// bombChart is a chart whose one template is tmpl.
func bombChart(name, tmpl string) map[string]string {
	return map[string]string{
		"charts/" + name + "/Chart.yaml":          "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n",
		"charts/" + name + "/values.yaml":         "loop: '{{ tpl .Values.loop . }}'\n",
		"charts/" + name + "/templates/bomb.yaml": tmpl,
	}
}

// maxRSSBound is what drift and the largest of its render workers may reach: a worker
// is held to --render-memory (1 GiB by default, counted as its data segment), and its
// code pages, shared with drift's binary, come on top. Without the workers, the same
// repository takes drift to 4.5 GB (a stack overflow) or 7 GB (out of memory).
const maxRSSBound = 1<<30 + 256<<20

// TestRendererBombsEndTheirTargetAndTheReportSurvives is the attack: a pull request
// whose charts recurse forever through tpl, write a gigabyte, and range two billion
// times, beside a healthy target. drift must report each bomb as its own failure,
// still report the healthy target, stay within its memory bound, and end.
func TestRendererBombsEndTheirTargetAndTheReportSurvives(t *testing.T) {
	ns := namespace(t)
	files := map[string]string{
		"drift.yaml": sub(`targets:
  - {name: healthy, path: healthy, namespace: NS}
  - {name: recursion, path: charts/recursion, namespace: NS, helm: {releaseName: r}}
  - {name: gigabyte, path: charts/gigabyte, namespace: NS, helm: {releaseName: g}}
  - {name: billions, path: charts/billions, namespace: NS, helm: {releaseName: b}}
`, ns),
		"healthy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\ndata: {a: b}\n",
	}
	for name, tmpl := range map[string]string{
		"recursion": "{{ tpl .Values.loop . }}\n",
		"gigabyte":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}\ndata:\n  x: \"{{ range until 100000 }}{{ repeat 10000 \"x\" }}{{ end }}\"\n",
		"billions":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  x: \"{{ range until 2000000000 }}x{{ end }}\"\n",
	} {
		for p, c := range bombChart(name, tmpl) {
			files[p] = c
		}
	}
	r := repo(t, files)

	// Far more than the run needs (some seconds); it only keeps a hung run from
	// hanging the suite.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "diff", "--repo", r.Dir, "--ref", "main", "-o", "json", "--kubeconfig", env.Kubeconfig)
	cmd.Env = append(os.Environ(), "DRIFT_TEST_RUN_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("drift did not end: %v\n%s", ctx.Err(), stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2\nstderr:\n%s", err, stderr.String())
	}
	rep := &report.Report{}
	if err := json.Unmarshal(stdout.Bytes(), rep); err != nil {
		t.Fatalf("no report: %v\nstderr:\n%s", err, stderr.String())
	}
	if rep.Complete {
		t.Errorf("report complete, want incomplete")
	}
	byTarget := map[string]report.Target{}
	for _, tg := range rep.Targets {
		byTarget[tg.Name] = tg
	}
	healthy := byTarget["healthy"]
	if len(healthy.Objects) != 1 || healthy.Objects[0].Name != "fine" || healthy.Objects[0].Category != report.Add {
		t.Errorf("healthy target = %+v, want ConfigMap fine added", healthy.Objects)
	}
	for _, name := range []string{"recursion", "gigabyte", "billions"} {
		objs := byTarget[name].Objects
		if len(objs) != 1 {
			t.Errorf("target %s: %d objects, want one failure: %+v", name, len(objs), objs)
			continue
		}
		f := objs[0]
		if (f.ErrorReason != "too-large" && f.ErrorReason != "render-failed") || !strings.HasPrefix(f.Source, "charts/"+name+"/") ||
			!strings.Contains(f.Error, "charts/"+name) {
			t.Errorf("target %s: failure %s at %s: %s; want too-large or render-failed naming the chart", name, f.ErrorReason, f.Source, f.Error)
		}
		if strings.Contains(f.Error, "xxxx") || strings.Contains(f.Error, "goroutine") {
			t.Errorf("target %s: the failure quotes output or a runtime dump: %s", name, f.Error)
		}
	}
	// Maxrss of a waited-for process is the largest of it and its waited-for children:
	// drift and every render worker.
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	peak := int64(ru.Maxrss) * 1024
	t.Logf("peak RSS of drift and its render workers: %d MiB", peak>>20)
	if peak > maxRSSBound {
		t.Errorf("peak RSS %d MiB, over the %d MiB bound", peak>>20, int64(maxRSSBound)>>20)
	}
}

// TestBaseNeverSkipsATargetWhoseWorkerDidNotFinish: what a rendering cut short read
// is unknown, so with --base a change anywhere in the repository keeps the target in
// the run, reported as its failure, never skipped as unchanged.
func TestBaseNeverSkipsATargetWhoseWorkerDidNotFinish(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{
		"drift.yaml":              sub("targets:\n  - {name: app, path: app, namespace: NS}\n", ns),
		"app/kustomization.yaml":  "resources: [../shared/cm.yaml]\n",
		"shared/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n",
		"elsewhere/unrelated.txt": "one\n",
	})
	base, _ := r.Git("rev-parse", "HEAD")
	if _, err := r.CommitFiles(map[string]string{"elsewhere/unrelated.txt": "two\n"}, "unrelated"); err != nil {
		t.Fatal(err)
	}
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", strings.TrimSpace(base), "-o", "json", "--render-timeout", "1ns")
	if o.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
	}
	rep := decodeReport(t, o)
	if len(rep.Targets) != 1 || rep.Targets[0].Skipped != "" || len(rep.Targets[0].Objects) != 1 || rep.Targets[0].Objects[0].ErrorReason != "too-large" {
		t.Fatalf("target app should be previewed and fail, not be skipped: %+v", rep.Targets)
	}
}
