package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/scrub"
)

// TestStreamedEntriesMakeTheSameReport: with a sink (the run's entry builder), each
// object's entry is built as its preview returns and its objects are dropped; the
// report is byte for byte the one built from whole results at the end, by the same
// builder. The run holds what makes that hard: a ConfigMap quoting a Secret's live
// value, its rendered value, the value of a Secret only pruning reads, and a masked
// field's value; an object two targets share; enough ConfigMaps for a LIST; a pull
// request's change told apart from drift; a Secret value that is also the name of a
// target whose cluster cannot be reached (names are shown, so not scrubbed, whether
// or not the target was previewed).
func TestStreamedEntriesMakeTheSameReport(t *testing.T) {
	ctx := context.Background()
	ns := "stream"
	cs := kubernetes.NewForConfigOrDie(shared.Env(t).Config)
	mustCreate := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	mustCreate(err)
	setID := inventory.ApplySetID("parent", ns, "ConfigMap", "")
	member := map[string]string{"applyset.kubernetes.io/part-of": setID}
	create := metav1.CreateOptions{FieldManager: "kubectl"}
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		StringData: map[string]string{"password": "live-password-1234"}}, create)
	mustCreate(err)
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "old", Labels: member},
		StringData: map[string]string{"password": "pruned-password-9012"}}, create)
	mustCreate(err)
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "parent", Labels: map[string]string{"applyset.kubernetes.io/id": setID},
		Annotations: map[string]string{"applyset.kubernetes.io/tooling": "kubectl/v1.32", "applyset.kubernetes.io/contains-group-kinds": "Secret"}}}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, parent, create)
	mustCreate(err)
	for i := range 10 {
		_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i)},
			Data: map[string]string{"color": "red"}}, create)
		mustCreate(err)
	}

	drift := "targets:\n- {name: a, path: a}\n- {name: b, path: b}\n- {name: remote-secret-name, path: b, context: far}\nmask:\n- {kind: ConfigMap, name: masked, paths: [/data/token]}\n"
	parentYAML := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: parent\n  namespace: %s\n  labels: {applyset.kubernetes.io/id: %s}\n"+
		"  annotations: {applyset.kubernetes.io/tooling: kubectl/v1.32, applyset.kubernetes.io/contains-group-kinds: Secret}\n", ns, setID)
	secret := func(pw string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: %s}\nstringData: {password: %s}\n", ns, pw)
	}
	files := map[string]string{"drift.yaml": drift, "a/parent.yaml": parentYAML, "a/db.yaml": secret("live-password-1234"), "b/c0.yaml": cm(ns, "c0", "red")}
	for i := range 10 {
		files[fmt.Sprintf("a/c%d.yaml", i)] = cm(ns, fmt.Sprintf("c%d", i), "blue")
	}
	r, err := gitfixture.Init(t.TempDir())
	mustCreate(err)
	_, err = r.CommitFiles(files, "base")
	mustCreate(err)
	baseCommit, _ := r.Git("rev-parse", "HEAD")
	_, err = r.CommitFiles(map[string]string{
		"a/db.yaml": secret("head-password-5678"),
		"a/c1.yaml": cm(ns, "c1", "green"),
		"a/quotes.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: quotes, namespace: %s}\n"+
			"data: {live: live-password-1234, head: head-password-5678, pruned: pruned-password-9012, masked: masked-token-3456, named: remote-secret-name}\n", ns),
		"a/named.yaml":  fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: named, namespace: %s}\nstringData: {v: remote-secret-name}\n", ns),
		"a/masked.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: masked, namespace: %s}\ndata: {token: masked-token-3456}\n", ns),
	}, "head")
	mustCreate(err)
	targets, snaps := planned(t, r.Dir, drift, "HEAD", strings.TrimSpace(baseCommit))
	head, base := snaps[0], snaps[1]

	run := func(t *testing.T, split, stream bool) (string, *Preview) {
		t.Helper()
		b := entry.NewBuilder(entry.Options{}, scrub.New())
		deps := Deps{
			Clusters: Live{Connect: func(ctx context.Context, key plan.ClusterKey) (*kube.Connection, error) {
				if key.Context == "far" {
					return nil, errors.New("dial tcp: no route to host")
				}
				return connectLive(t, ns)(ctx, key)
			}},
			Cache:    &rendercache.Cache{},
			Appliers: appliers.All(),
		}
		if stream {
			deps.Sink = b
		}
		baseSnap := base
		if !split {
			baseSnap = nil
		}
		p, err := Run(ctx, deps, Options{Concurrency: 4, Prune: true, SplitDrift: split}, targets, head, baseSnap)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		rep, err := entry.Build(entry.Input{Targets: p.Inputs()}, b)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := report.WriteJSON(&out, rep); err != nil {
			t.Fatal(err)
		}
		if err := write.Text(&out, rep, write.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		return out.String(), p
	}
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			whole, _ := run(t, split, false)
			streamed, p := run(t, split, true)
			if streamed != whole {
				t.Errorf("the streamed report differs from the whole one:\n%s", golden.Diff(whole, streamed))
			}
			for _, leak := range []string{"live-password-1234", "head-password-5678", "pruned-password-9012", "masked-token-3456"} {
				if strings.Contains(streamed, leak) {
					t.Errorf("the report leaks %q", leak)
				}
			}
			for _, want := range []string{"- v1 Secret stream/old", "~ v1 ConfigMap stream/c1", "also deploys this object", "named: remote-secret-name"} {
				if !strings.Contains(streamed, want) {
					t.Errorf("the report lacks %q:\n%s", want, streamed)
				}
			}
			held := 0
			for _, tg := range p.Targets {
				for _, res := range tg.Results {
					if res.Live != nil || res.Merged != nil {
						held++
					}
				}
				for _, res := range tg.BasePredictions {
					if res != nil && (res.Live != nil || res.Merged != nil) {
						held++
					}
				}
			}
			if held != 0 {
				t.Errorf("%d results still hold their objects once their entries were built", held)
			}
		})
	}
}

// blockingFS holds back reading files under dir until release is closed, or for 20
// seconds, and says whether it had to give up.
type blockingFS struct {
	fs.FS
	dir     string
	release chan struct{}
	gaveUp  atomic.Bool
}

func (b *blockingFS) Open(name string) (fs.File, error) {
	if strings.HasPrefix(name, b.dir+"/") {
		select {
		case <-b.release:
		case <-time.After(20 * time.Second):
			b.gaveUp.Store(true)
		}
	}
	return b.FS.Open(name)
}

// TestAClustersObjectsAreSentWhileAnotherClusterStillRenders: the objects of a
// target are previewed while a target of another cluster is still rendering (its
// files are held back until the first object is previewed), and the report is whole.
func TestAClustersObjectsAreSentWhileAnotherClusterStillRenders(t *testing.T) {
	ctx := context.Background()
	ns := "overlap"
	cs := kubernetes.NewForConfigOrDie(shared.Env(t).Config)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	drift := "targets:\n- {name: a, path: a, context: one}\n- {name: b, path: b, context: two, renderer: plain}\n"
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"drift.yaml": drift, "a/left.yaml": cm(ns, "left", "blue"), "b/right.yaml": cm(ns, "right", "blue")}, "head"); err != nil {
		t.Fatal(err)
	}
	targets, snaps := planned(t, r.Dir, drift, "HEAD")
	head := snaps[0]
	held := &blockingFS{FS: head.FS, dir: "b", release: make(chan struct{})}
	head.FS = held
	var once sync.Once
	b := entry.NewBuilder(entry.Options{}, scrub.New())
	deps := Deps{
		Clusters: Live{Connect: connectLive(t, ns)},
		Cache:    &rendercache.Cache{},
		Appliers: appliers.All(),
		Progress: func(done, total int) { once.Do(func() { close(held.release) }) },
		Sink:     b,
	}
	p, err := Run(ctx, deps, Options{Concurrency: 4}, targets, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if held.gaveUp.Load() {
		t.Error("target b's files were read only after 20 seconds: no object was previewed while it rendered")
	}
	rep, err := entry.Build(entry.Input{Targets: p.Inputs()}, b)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Add != 2 || rep.Summary.Error != 0 {
		t.Errorf("summary %+v, want the two ConfigMaps added", rep.Summary)
	}
}

// Helm options on a target that renders with another renderer are one error from
// drift.yaml, not silently dropped; on a chart they are used.
func TestHelmOptionsOnAnotherRendererAreAnError(t *testing.T) {
	entry := &config.Target{Name: "web", Path: "web", Helm: &config.HelmTarget{ValuesFiles: []string{"prod.yaml"}}}
	for renderer, want := range map[string]bool{render.RendererKustomize: true, render.RendererPlain: true, render.RendererHelm: false} {
		tg := &Target{Target: plan.Target{Name: "web", Entry: entry, Spec: render.Spec{Path: "web", Renderer: renderer}}, Rendered: &render.Result{}}
		f, got := tg.optionsUnused()
		if got != want || (got && (f.Reason != reason.Config || !strings.Contains(f.Message, "target web sets helm options, but web renders with "+renderer))) {
			t.Errorf("%s: %v %q", renderer, got, f.Message)
		}
	}
}
