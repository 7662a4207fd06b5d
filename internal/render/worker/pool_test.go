package worker

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// numbers is a template whose values are every kind JSON can hold, at the edges of
// int64 and float64, and inline values of each Go type drift.yaml gives.
const numbers = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: numbers
spec:
  int: 9007199254740993
  maxInt64: 9223372036854775807
  minInt64: -9223372036854775808
  overInt64: 18446744073709551616
  big: 1e300
  tiny: 1.5e-7
  frac: 0.1
  whole: 2.0
  neg: -5
  nul: null
  empty: {}
  emptyList: []
  nested: [[1, 2.5, null], [{a: null, b: [true, "007"]}], []]
  inline:
    count: {{ .Values.count }}
    ratio: {{ .Values.ratio }}
    huge: {{ .Values.huge }}
    list: {{ .Values.list | toJson }}
    none: {{ .Values.none | toJson }}
    kinds: {{ kindOf .Values.count }} {{ kindOf .Values.ratio }} {{ kindOf .Values.huge }} {{ kindOf (index .Values.list 0) }}
`

// webOptions render testdata/platform's chart as the render package's tests do.
var webOptions = render.HelmOptions{
	ReleaseName: "web", ReleaseNamespace: "web",
	ValuesFiles: []string{"values-common.yaml", "values-prod.yaml"},
	Values:      map[string]any{"cache": map[string]any{"maxMemory": "256mb"}},
	KubeVersion: "v1.36.3",
	APIVersions: []string{"v1", "apps/v1", "example.com/v1", "example.com/v1/Widget"},
}

// platformRepo is a git repository holding testdata/platform, with a template of
// numbers added to its chart, committed, and the work tree edited after the commit.
func platformRepo(t *testing.T) (root, commit string) {
	t.Helper()
	dir := t.TempDir()
	repo, err := gitfixture.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitTree("../../../testdata/platform", "platform"); err != nil {
		t.Fatal(err)
	}
	if commit, err = repo.CommitFiles(map[string]string{"charts/web/templates/numbers.yaml": numbers}, "numbers"); err != nil {
		t.Fatal(err)
	}
	if err := repo.Write(map[string]string{"charts/web/values-prod.yaml": "replicaCount: 7\ngreeting: edited, not committed\n"}); err != nil {
		t.Fatal(err)
	}
	return dir, commit
}

// TestWorkerResultsAreTheInProcessResultsExactly: what crosses the process boundary
// is the same Go value an in-process rendering gives, down to int64 against float64,
// nulls and nested lists, and inline values reach the chart as a values file's do
// (every number a float64) either way.
func TestWorkerResultsAreTheInProcessResultsExactly(t *testing.T) {
	t.Parallel()
	root, commit := platformRepo(t)
	opts := webOptions
	opts.Values = map[string]any{"count": 3, "ratio": 0.5, "huge": uint64(1 << 63), "list": []any{1, 2.5, "x", nil, map[string]any{"k": false}}, "none": nil,
		"cache": map[string]any{"maxMemory": "256mb"}}
	repo, err := source.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	iso := New(context.Background(), root, render.DefaultLimits())
	for _, tc := range []struct {
		name, ref string
		spec      render.Spec
	}{
		{name: "helm, commit", ref: commit, spec: render.Spec{Path: "charts/web", Renderer: render.RendererHelm, Helm: opts}},
		{name: "helm, work tree", ref: "", spec: render.Spec{Path: "charts/web", Renderer: render.RendererHelm, Helm: opts}},
		{name: "kustomize", ref: commit, spec: render.Spec{Path: "apps/shop/overlays/prod", Renderer: render.RendererKustomize}},
		{name: "plain", ref: commit, spec: render.Spec{Path: "platform", Renderer: render.RendererPlain}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			snap, err := repo.Snapshot(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			want, err := render.Render(snap.FS, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Objects) == 0 || len(want.Failures) != 0 {
				t.Fatalf("in-process: %d objects, failures %v", len(want.Objects), want.Failures)
			}
			got, err := iso.Render(snapshotCommit(snap), tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(decoded(got), decoded(want)) {
				t.Errorf("worker result differs from the in-process one:\n got %#v\nwant %#v", got, want)
			}
			if tc.spec.Renderer != render.RendererHelm {
				return
			}
			var spec map[string]any
			for _, o := range got.Objects {
				if o.Get().GetName() == "numbers" {
					spec = o.Get().Object["spec"].(map[string]any)
				}
			}
			if spec == nil {
				t.Fatalf("no numbers object among %d", len(got.Objects))
			}
			inline := spec["inline"].(map[string]any)
			if spec["int"] != int64(9007199254740993) || spec["big"] != 1e300 || spec["whole"] != int64(2) || spec["nul"] != nil ||
				inline["count"] != int64(3) || inline["kinds"] != "float64 float64 float64 float64" {
				t.Errorf("numbers = %#v", spec)
			}
		})
	}
}

func snapshotCommit(s *source.Snapshot) string { return s.Commit }

// decoded is r with each object decoded, as an in-process rendering holds it (the
// render package's tests check the identity the wire carries).
func decoded(r *render.Result) *render.Result {
	out := *r
	out.Objects = make([]render.Object, len(r.Objects))
	for i, o := range r.Objects {
		out.Objects[i] = render.Object{Obj: o.Get(), Source: o.Source, Doc: o.Doc, Item: o.Item, Notes: o.Notes}
	}
	return &out
}

// bombRepo commits a chart per template, and a plain target beside them.
func bombRepo(t *testing.T, charts map[string]string) (root, commit string) {
	t.Helper()
	dir := t.TempDir()
	repo, err := gitfixture.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n"}
	for name, tmpl := range charts {
		files["charts/"+name+"/Chart.yaml"] = "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n"
		files["charts/"+name+"/values.yaml"] = "loop: '{{ tpl .Values.loop . }}'\n"
		files["charts/"+name+"/templates/bomb.yaml"] = tmpl
	}
	if commit, err = repo.CommitFiles(files, "bombs"); err != nil {
		t.Fatal(err)
	}
	return dir, commit
}

// TestWorkerLimitsEndTheTargetWithAFailureNamingIt: each way a template can take a
// renderer down (recursion, memory, time, output) ends in a failure of its own target
// that names the chart and the limit; nothing of the content is quoted.
func TestWorkerLimitsEndTheTargetWithAFailureNamingIt(t *testing.T) {
	t.Parallel()
	root, commit := bombRepo(t, map[string]string{
		"recursion": "{{ tpl .Values.loop . }}\n",
		"memory":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n  x: \"{{ range until 100000 }}{{ repeat 10000 \"x\" }}{{ end }}\"\n",
		"until":     "{{ range until 2000000000 }}x{{ end }}\n",
		"time":      "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n",
		"output":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: o}\ndata:\n  x: \"{{ repeat 300000 \"x\" }}\"\n",
	})
	// Generous time for all but the endless loop: these run side by side on a small
	// machine, each collecting garbage hard near its memory limit.
	limits := render.Limits{MemoryBytes: 1 << 30, Timeout: 5 * time.Minute, OutputBytes: 200_000}
	short := limits
	short.Timeout = 2 * time.Second
	for _, tc := range []struct {
		chart, want string
		limits      render.Limits
	}{
		{chart: "recursion", want: "recursion deeper than the 64 MiB stack limit", limits: limits},
		{chart: "memory", want: "more than 1 GiB of memory (--render-memory)", limits: limits},
		{chart: "until", want: "more than 1 GiB of memory (--render-memory)", limits: limits},
		{chart: "time", want: "longer than 2s (--render-timeout)", limits: short},
		{chart: "output", want: "over the 195.3 KiB limit per target (--render-max-output)", limits: limits},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			t.Parallel()
			res, err := New(context.Background(), root, tc.limits).Render(commit, render.Spec{Path: "charts/" + tc.chart, Renderer: render.RendererHelm, Helm: render.HelmOptions{ReleaseName: "x"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Objects) != 0 || len(res.Failures) != 1 {
				t.Fatalf("objects %d, failures %v: want one failure", len(res.Objects), res.Failures)
			}
			f := res.Failures[0]
			if f.Reason != reason.TooLarge || !strings.HasPrefix(f.Source, "charts/"+tc.chart+"/") || !strings.Contains(f.Message, "chart") ||
				!strings.Contains(f.Message, tc.chart) || !strings.Contains(f.Message, tc.want) {
				t.Errorf("failure = %+v, want too-large naming charts/%s and saying %q", f, tc.chart, tc.want)
			}
			if tc.chart != "output" && !res.Inputs.Touched("anything/at/all.yaml") {
				t.Errorf("inputs %v: a rendering that did not finish must count every change", res.Inputs)
			}
			if strings.Contains(f.Message, "xxxx") || len(f.Message) > 400 {
				t.Errorf("failure quotes output or runtime dumps: %q", f.Message)
			}
		})
	}
	res, err := New(context.Background(), root, limits).Render(commit, render.Spec{Path: "plain", Renderer: render.RendererPlain}, nil)
	if err != nil || len(res.Objects) != 1 || len(res.Failures) != 0 {
		t.Errorf("plain target beside the bombs: %v, %v", res, err)
	}
}

// TestTargetsRenderInBatchesEachWithItsOwnLimits: targets queued side by side (as the
// run's render cache queues them) share workers, a few dozen to a worker, and each ends as it would
// alone: the good ones rendered, a chart that recurses, one that writes too much and
// one that loops past its time each failing with its own failure, the targets queued
// after them rendered too.
func TestTargetsRenderInBatchesEachWithItsOwnLimits(t *testing.T) {
	t.Parallel()
	charts := map[string]string{
		"recursion": "{{ tpl .Values.loop . }}\n",
		"time":      "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n",
		"output":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: o}\ndata:\n  x: \"{{ repeat 300000 \"x\" }}\"\n",
	}
	for i := range 40 {
		charts[fmt.Sprintf("good-%02d", i)] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\n"
	}
	root, commit := bombRepo(t, charts)
	// The time limit leaves the recursion room to reach the stack limit on a busy
	// machine (it took over 3s under CI's load) and still stops the endless loop.
	iso := New(context.Background(), root, render.Limits{MemoryBytes: 1 << 30, Timeout: 12 * time.Second, OutputBytes: 200_000})
	names := slices.Sorted(maps.Keys(charts))
	results := make([]*render.Result, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			res, err := iso.Queue(commit, render.Spec{Path: "charts/" + name, Renderer: render.RendererHelm, Helm: render.HelmOptions{ReleaseName: "r-" + name}})
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	for i, name := range names {
		res := results[i]
		if res == nil {
			continue
		}
		want := map[string]string{"recursion": "recursion deeper than the 64 MiB stack limit", "time": "longer than 12s (--render-timeout) and was stopped (a template that loops",
			"output": "over the 195.3 KiB limit per target (--render-max-output)"}[name]
		switch {
		case want == "" && (len(res.Failures) != 0 || len(res.Objects) != 1 || res.Objects[0].Get().GetName() != "r-"+name):
			t.Errorf("%s: objects %d, failures %v: want its ConfigMap", name, len(res.Objects), res.Failures)
		case want != "" && (len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, want) || !strings.Contains(res.Failures[0].Message, "charts/"+name)):
			t.Errorf("%s: failures %v, want one saying %q", name, res.Failures, want)
		}
	}
	t.Logf("%d workers for %d targets", iso.workers.Load(), len(names))
	if n := iso.workers.Load(); n >= int64(len(names))/4 {
		t.Errorf("%d workers for %d targets: not batched", n, len(names))
	}
}

// TestAWarmedWorkerRendersTheFirstBatch: Warm starts a session worker before any
// rendering, and the first batch renders in it rather than starting another; one
// warmed while the pool closes is not kept.
func TestAWarmedWorkerRendersTheFirstBatch(t *testing.T) {
	t.Parallel()
	root, commit := bombRepo(t, map[string]string{"good": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\n"})
	pool := New(context.Background(), root, render.Limits{MemoryBytes: 1 << 30, Timeout: time.Minute, OutputBytes: 1 << 20})
	defer pool.Close()
	idle := func() int {
		pool.sessions.mu.Lock()
		defer pool.sessions.mu.Unlock()
		return len(pool.sessions.idle)
	}
	pool.Warm()
	for deadline := time.Now().Add(time.Minute); idle() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Warm kept no worker")
		}
	}
	res, err := pool.Queue(commit, render.Spec{Path: "charts/good", Renderer: render.RendererHelm, Helm: render.HelmOptions{ReleaseName: "r"}})
	if err != nil || len(res.Objects) != 1 || len(res.Failures) != 0 {
		t.Fatalf("render: %v, %v", res, err)
	}
	if n := pool.workers.Load(); n != 1 {
		t.Errorf("%d workers started: the warmed one did not render the first batch", n)
	}

	closing := New(context.Background(), root, render.Limits{})
	closing.Warm()
	closing.Close()
	// Once the warmed worker's process has started, the warming decides within
	// moments whether to keep it; a pool closed before then keeps none.
	for deadline := time.Now().Add(time.Minute); closing.workers.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Warm started no worker")
		}
	}
	time.Sleep(500 * time.Millisecond)
	closing.sessions.mu.Lock()
	kept := len(closing.sessions.idle)
	closing.sessions.mu.Unlock()
	if kept != 0 {
		t.Errorf("a worker warmed while the pool closed was kept")
	}
	closing.Close()
}
