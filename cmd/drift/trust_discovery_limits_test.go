package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/github/githubtest"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

// appSet is an ApplicationSet of goTemplate whose Applications are named by tmpl,
// each of the repository's healthy/ directory.
func appSet(name, generators, tmpl string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: ` + name + `, namespace: argocd}
spec:
  goTemplate: true
  generators:
` + generators + `
  template:
    metadata: {name: '` + tmpl + `'}
    spec:
      project: default
      source: {repoURL: ` + fluxRemote + `, path: healthy, targetRevision: HEAD}
      destination: {server: https://kubernetes.default.svc, namespace: NS}
`
}

// healthyApp is an Application of healthy/, beside the bombs.
const healthyApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: healthy, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + fluxRemote + `, path: healthy, targetRevision: HEAD}
  destination: {server: https://kubernetes.default.svc, namespace: NS}
`

// runBinary runs the test binary as drift until it ends or ctx does, and reads its
// JSON report; stop, when set, is called once the process started.
func runBinary(t *testing.T, ctx context.Context, stop func(*exec.Cmd), args ...string) (*report.Report, outcome, *syscall.Rusage) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DRIFT_TEST_RUN_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if stop != nil {
		stop(cmd)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("drift did not end: %v\n%s", ctx.Err(), stderr.String())
	}
	o := outcome{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	if err != nil && o.code < 0 {
		t.Fatalf("drift: %v", err)
	}
	var rep *report.Report
	if stdout.Len() > 0 {
		rep = &report.Report{}
		if err := json.Unmarshal(stdout.Bytes(), rep); err != nil {
			t.Fatalf("not a report: %v\n%s", err, stdout.String())
		}
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return rep, o, ru
}

// TestApplicationSetBombsEndTheirApplicationSetAndTheReportSurvives: templates that
// allocate two billion integers, loop ten billion times, and generate more
// Applications than --max-targets allows, beside a healthy Application. Each bomb is
// an error naming its ApplicationSet, the healthy Application is previewed, drift
// stays within the worker's memory bound, and the run ends.
func TestApplicationSetBombsEndTheirApplicationSetAndTheReportSurvives(t *testing.T) {
	ns := namespace(t)
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("{idx: '%d'}", i))
	}
	r := repo(t, map[string]string{
		"apps/healthy.yaml": sub(healthyApp, ns),
		"apps/memory.yaml":  sub(appSet("memory", "  - list: {elements: [{idx: '1'}]}", "m-{{ len (until 2000000000) }}"), ns),
		"apps/loop.yaml":    sub(appSet("loop", "  - list: {elements: [{idx: '1'}]}", "l{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"), ns),
		"apps/many.yaml":    sub(appSet("many", "  - list: {elements: ["+strings.Join(many, ", ")+"]}", "many-{{ .idx }}"), ns),
		"healthy/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\ndata: {a: b}\n",
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, o, ru := runBinary(t, ctx, nil, "diff", "--repo", r.Dir, "--ref", "main", "-o", "json", "--kubeconfig", env.Kubeconfig,
		"--render-timeout", "10s", "--render-memory", "512Mi", "--max-targets", "50")
	if o.code != exitError || rep == nil || rep.Complete {
		t.Fatalf("exit %d, want 2 and an incomplete report\n%s", o.code, o.stderr)
	}
	if h := targetNamed(rep, "Application/healthy"); h == nil || len(h.Objects) != 1 || h.Objects[0].Category != report.Add {
		t.Errorf("the healthy Application: %+v", h)
	}
	for name, want := range map[string]string{"memory": "too-large", "loop": "too-large", "many": "too-large"} {
		tg := targetNamed(rep, "ApplicationSet/"+name)
		if tg == nil || len(tg.Objects) != 1 {
			t.Errorf("ApplicationSet/%s: %+v", name, tg)
			continue
		}
		e := tg.Objects[0]
		if string(e.ErrorReason) != want || !strings.Contains(e.Error, "ApplicationSet argocd/"+name) || strings.Contains(e.Error, "goroutine") {
			t.Errorf("ApplicationSet/%s: %s: %s; want %s naming it", name, e.ErrorReason, e.Error, want)
		}
	}
	if targetNamed(rep, "Application/many-1") != nil {
		t.Errorf("Applications past --max-targets were made")
	}
	peak := int64(ru.Maxrss) * 1024
	t.Logf("peak RSS of drift and its workers: %d MiB", peak>>20)
	if peak > 512<<20+256<<20 {
		t.Errorf("peak RSS %d MiB, over the worker's bound", peak>>20)
	}
}

// TestDiscoveryEndsAtTimeoutAndSIGTERM: an ApplicationSet whose template loops ten
// billion times keeps a render worker busy. drift ends at --timeout, and at once on
// SIGTERM, leaves no worker behind, and still reports, in every output asked for
// (stdout, the JSON report, the pull request's comment, check and job summary), what
// discovery found: the healthy Application not-checked, and where discovery stopped.
func TestDiscoveryEndsAtTimeoutAndSIGTERM(t *testing.T) {
	ns := namespace(t)
	srv := githubtest.New(ghToken)
	defer srv.Close()
	summary := actionsEnv(t, srv, 12)
	r := repo(t, map[string]string{
		"apps/healthy.yaml": sub(healthyApp, ns),
		"apps/loop.yaml":    sub(appSet("loop", "  - list: {elements: [{idx: '1'}]}", "l{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"), ns),
		"healthy/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n",
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	jsonOut := filepath.Join(t.TempDir(), "report.json")
	// Far more than either run needs; it only keeps a hung run from hanging the suite.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "-o", "json", "--kubeconfig", env.Kubeconfig, "--github-comment", "--json-report", jsonOut}
	check := func(name string, rep *report.Report, o outcome, cause string) {
		t.Helper()
		if o.code != exitError || rep == nil || rep.Complete || !strings.Contains(o.stderr, cause) || !strings.Contains(o.stderr, "discovery") {
			t.Fatalf("%s: exit %d, report %v\n%s", name, o.code, rep != nil, o.stderr)
		}
		if h := targetNamed(rep, "Application/healthy"); h == nil || len(h.Objects) != 1 || h.Objects[0].ErrorReason != reason.NotChecked ||
			!strings.Contains(h.Objects[0].Error, "not previewed: the run ended while its targets were discovered") || !strings.Contains(h.Objects[0].Error, cause) {
			t.Errorf("%s: the healthy Application: %+v", name, h)
		}
		d := targetNamed(rep, "discovery")
		if d == nil || len(d.Objects) != 1 || d.Objects[0].ErrorReason != reason.NotChecked || d.Objects[0].Source != "apps/loop.yaml" ||
			d.Objects[0].Kind != "ApplicationSet" || d.Objects[0].Name != "loop" || !strings.Contains(d.Objects[0].Error, "discovery stopped here") {
			t.Errorf("%s: where discovery stopped: %+v", name, d)
		}
		if data, err := os.ReadFile(jsonOut); err != nil || !strings.Contains(string(data), `"complete": false`) || !strings.Contains(string(data), "Application/healthy") {
			t.Errorf("%s: --json-report: %v\n%s", name, err, data)
		}
		comments := srv.Comments(12)
		if len(comments) != 1 || !strings.Contains(comments[0].Body, "not-checked") || !strings.Contains(comments[0].Body, "Application/healthy") {
			t.Errorf("%s: comments = %+v", name, comments)
		}
		if n := len(srv.CheckRuns); n == 0 || srv.CheckRuns[n-1]["conclusion"] != "failure" {
			t.Errorf("%s: check runs = %+v", name, srv.CheckRuns)
		}
		if data, err := os.ReadFile(summary); err != nil || !strings.Contains(string(data), "not-checked") {
			t.Errorf("%s: job summary: %v\n%s", name, err, data)
		}
		_ = os.Remove(jsonOut)
		_ = os.Remove(summary)
	}
	rep, o, _ := runBinary(t, ctx, nil, append(args, "--timeout", "5s")...)
	check("--timeout 5s", rep, o, "timed out after 5s")
	rep, o, _ = runBinary(t, ctx, func(cmd *exec.Cmd) {
		time.Sleep(3 * time.Second)
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}, args...)
	check("SIGTERM", rep, o, "terminated signal received")
	if left := processesUsing(r.Dir); len(left) > 0 {
		t.Errorf("render workers left behind: %q", left)
	}
}

// TestAnAppOfAppsBombIsBoundedByMaxTargets: each Application renders a chart of six
// more, five levels deep (7,776 Applications). Discovery stops at --max-targets with
// an error naming what it did not follow, and the healthy Application is reported.
func TestAnAppOfAppsBombIsBoundedByMaxTargets(t *testing.T) {
	ns := namespace(t)
	child := `{{- range $i := until 6 }}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: '{{ $.Values.prefix }}-{{ $i }}', namespace: argocd}
spec:
  project: default
  source:
    repoURL: ` + fluxRemote + `
    path: charts/bomb
    targetRevision: HEAD
    helm: {parameters: [{name: prefix, value: '{{ $.Values.prefix }}-{{ $i }}'}]}
  destination: {server: https://kubernetes.default.svc, namespace: NS}
{{- end }}
`
	r := repo(t, map[string]string{
		"apps/healthy.yaml":            sub(healthyApp, ns),
		"apps/bomb.yaml":               sub(strings.ReplaceAll(strings.ReplaceAll(healthyApp, "name: healthy", "name: bomb"), "path: healthy", "path: charts/bomb"), ns),
		"charts/bomb/Chart.yaml":       "apiVersion: v2\nname: bomb\nversion: 0.1.0\n",
		"charts/bomb/values.yaml":      "prefix: b\n",
		"charts/bomb/templates/a.yaml": sub(child, ns),
		"healthy/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n",
	})
	if _, err := r.Git("remote", "add", "origin", fluxRemote); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, o, _ := runBinary(t, ctx, nil, "diff", "--repo", r.Dir, "--ref", "main", "-o", "json", "--kubeconfig", env.Kubeconfig, "--max-targets", "40")
	if o.code != exitError || rep == nil || rep.Complete {
		t.Fatalf("exit %d, want 2 and an incomplete report\n%s", o.code, o.stderr)
	}
	if h := targetNamed(rep, "Application/healthy"); h == nil || len(h.Objects) != 1 || h.Objects[0].Category != report.Add {
		t.Errorf("the healthy Application: %+v", h)
	}
	n, found := 0, false
	for _, tg := range rep.Targets {
		if strings.HasPrefix(tg.Name, "Application/") {
			n++
		}
		for _, obj := range tg.Objects {
			if obj.ErrorReason == "too-large" && strings.Contains(obj.Error, "--max-targets") && strings.Contains(obj.Error, "what Application/b-") {
				found = true
			}
		}
	}
	if n > 40 {
		t.Errorf("%d Application targets, over --max-targets 40", n)
	}
	if !found {
		t.Errorf("no error names what discovery did not follow:\n%s", o.stdout)
	}
}
