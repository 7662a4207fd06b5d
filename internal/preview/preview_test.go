package preview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/testenv"
)

// shared is the real API server the tests preview on, started by the first test
// that needs it.
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &shared)) }

func cm(ns, name, color string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {color: %s}\n", name, ns, color)
}

// TestPreviewRunsTargetsOnTheirClusters: three targets of a pull request, without
// cobra or flags. Two share the live cluster, which is connected to once; the third's
// cluster cannot be reached, and only its target says so. The change is told apart
// from drift with the live object, the base's prediction and the head's in their own
// fields; a namespace the change creates is pending for every target of its
// cluster; an object two targets deploy is warned about in both.
func TestPreviewRunsTargetsOnTheirClusters(t *testing.T) {
	ctx := context.Background()
	ns := "preview-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:20]
	cs := kubernetes.NewForConfigOrDie(shared.Env(t).Config)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Live: drifted from the base (red, where the base says blue).
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"color": "red"}},
		metav1.CreateOptions{FieldManager: "kubectl"}); err != nil {
		t.Fatal(err)
	}
	drift := "targets:\n- {name: a, path: a}\n- {name: b, path: b}\n- {name: far, path: c, context: far}\n"
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"drift.yaml": drift, "a/cm.yaml": cm(ns, "x", "blue"), "b/z.yaml": cm(ns, "z", "blue"), "c/cm.yaml": cm(ns, "far", "blue")}, "base"); err != nil {
		t.Fatal(err)
	}
	baseCommit, _ := r.Git("rev-parse", "HEAD")
	newNS := ns + "-new"
	if _, err := r.CommitFiles(map[string]string{"a/cm.yaml": cm(ns, "x", "green"),
		"b/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + newNS + "}\n", "b/cm.yaml": cm(newNS, "pending", "blue") + "---\n" + cm(ns, "x", "green")}, "head"); err != nil {
		t.Fatal(err)
	}
	targets, snaps := planned(t, r.Dir, drift, "HEAD", strings.TrimSpace(baseCommit))
	head, base := snaps[0], snaps[1]

	var mu sync.Mutex
	connects := map[plan.ClusterKey]int{}
	deps := Deps{
		Clusters: Live{Connect: func(ctx context.Context, key plan.ClusterKey) (*kube.Connection, error) {
			mu.Lock()
			connects[key]++
			mu.Unlock()
			if key.Context == "far" {
				return nil, errors.New("dial tcp: no route to host")
			}
			clients, err := kube.NewClients(shared.Env(t).Config, 4)
			return &kube.Connection{Clients: clients, Namespace: ns, RequestTimeout: kube.DefaultRequestTimeout}, err
		}},
		Cache:    &rendercache.Cache{},
		Appliers: appliers.All(),
	}
	p, err := Run(ctx, deps, Options{Concurrency: 4, Prune: true, SplitDrift: true}, targets, head, base)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if connects[plan.ClusterKey{}] != 1 || connects[plan.ClusterKey{Context: "far"}] != 1 {
		t.Errorf("connected %v, want each cluster once", connects)
	}
	in := map[string]entry.TargetInput{}
	for _, ti := range p.Inputs() {
		in[ti.Name] = ti
	}

	a := in["a"]
	if len(a.Split) != 1 {
		t.Fatalf("target a: split %+v, want the one ConfigMap", a.Split)
	}
	x := a.Split[0]
	for what, c := range map[string]struct {
		u    *unstructured.Unstructured
		want string
	}{"live": {x.Head.Live, "red"}, "head prediction": {x.Head.Merged, "green"}, "base prediction": {baseMerged(x), "blue"}} {
		if got, _, _ := unstructured.NestedString(c.u.Object, "data", "color"); got != c.want {
			t.Errorf("target a: the %s says %q, want %q", what, got, c.want)
		}
	}
	if !warned(x.Head, reason.Duplicate, "target b also deploys") {
		t.Errorf("target a: no shared-object warning: %+v", x.Head.Warnings)
	}

	b := in["b"]
	seen := map[string]bool{}
	for _, s := range b.Split {
		seen[s.Head.ID.Name] = true
		switch s.Head.ID.Name {
		case "x":
			if !warned(s.Head, reason.Duplicate, "target a also deploys") {
				t.Errorf("target b: no shared-object warning: %+v", s.Head.Warnings)
			}
		case "pending":
			if !warned(s.Head, reason.NamespacePending, "") {
				t.Errorf("target b: pending's namespace is created by the change, yet %+v", s.Head)
			}
		}
	}
	if !seen["x"] || !seen["pending"] {
		t.Errorf("target b: split holds %v, want x and pending; failures %+v", seen, b.Failures)
	}
	far := in["far"]
	if len(far.Failures) != 1 || far.Failures[0].Reason != reason.Unavailable || !strings.Contains(far.Failures[0].Message, "context far: dial tcp: no route to host") {
		t.Errorf("target far: failures %+v, want its cluster unreachable", far.Failures)
	}
}

func baseMerged(s entry.Split) *unstructured.Unstructured {
	if s.Base == nil {
		return &unstructured.Unstructured{Object: map[string]any{}}
	}
	return s.Base.Merged
}

func warned(r dryrun.Result, why reason.Reason, text string) bool {
	for _, w := range r.Warnings {
		if w.Reason == why && strings.Contains(w.Message, text) {
			return true
		}
	}
	return false
}

// TestEphemeralLoadsOnlyWhatTheChangeTouches: on a throwaway server, a pull request
// that edits one ConfigMap of a target has the server loaded with the base's version
// of that ConfigMap alone, beside what is always loaded (the target's namespace, a
// Service that names its node port, an object two targets render): the ConfigMap and
// the Service that names no port the change leaves as they are are neither loaded
// nor sent, and are the same. With LoadAll, everything is loaded and
// sent, as before.
func TestEphemeralLoadsOnlyWhatTheChangeTouches(t *testing.T) {
	for _, loadAll := range []bool{false, true} {
		t.Run(fmt.Sprintf("LoadAll=%v", loadAll), func(t *testing.T) {
			ctx := context.Background()
			ns := fmt.Sprintf("leftasis-%v", loadAll)
			port := map[bool]string{false: "30181", true: "30182"}[loadAll]
			svc := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: " + ns + "}\nspec: {type: NodePort, ports: [{port: 80, nodePort: " + port + "}]}\n" +
				"---\napiVersion: v1\nkind: Service\nmetadata: {name: plain, namespace: " + ns + "}\nspec: {ports: [{port: 80}]}\n"
			drift := "targets:\n- {name: a, path: a, namespace: " + ns + "}\n- {name: b, path: b, namespace: " + ns + "}\n"
			r, err := gitfixture.Init(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.CommitFiles(map[string]string{"drift.yaml": drift, "a/cm.yaml": cm(ns, "same", "blue") + "---\n" + cm(ns, "edited", "blue") + "---\n" + cm(ns, "shared", "blue"),
				"a/svc.yaml": svc, "b/cm.yaml": cm(ns, "shared", "blue") + "---\n" + cm(ns, "b", "blue")}, "base"); err != nil {
				t.Fatal(err)
			}
			baseCommit, _ := r.Git("rev-parse", "HEAD")
			if _, err := r.CommitFiles(map[string]string{"a/cm.yaml": cm(ns, "same", "blue") + "---\n" + cm(ns, "edited", "green") + "---\n" + cm(ns, "shared", "blue"),
				"b/cm.yaml": cm(ns, "shared", "blue") + "---\n" + cm(ns, "b", "green")}, "head"); err != nil {
				t.Fatal(err)
			}
			targets, snaps := planned(t, r.Dir, drift, "HEAD", strings.TrimSpace(baseCommit))
			deps := Deps{
				Clusters: Ephemeral{Start: func(context.Context) (*kube.Connection, func(), error) {
					clients, err := kube.NewClients(shared.Env(t).Config, 4)
					return &kube.Connection{Clients: clients, Namespace: "default", RequestTimeout: kube.DefaultRequestTimeout}, func() {}, err
				}},
				Cache:    &rendercache.Cache{},
				Appliers: appliers.All(),
			}
			p, err := Run(ctx, deps, Options{Concurrency: 4, LoadAll: loadAll}, targets, snaps[0], snaps[1])
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			cs := kubernetes.NewForConfigOrDie(shared.Env(t).Config)
			loaded := map[string]bool{}
			cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cms.Items {
				if c.Name != "kube-root-ca.crt" {
					loaded["ConfigMap/"+c.Name] = true
				}
			}
			for _, name := range []string{"web", "plain"} {
				if _, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
					loaded["Service/"+name] = true
				}
			}
			want := map[string]bool{"ConfigMap/edited": true, "ConfigMap/shared": true, "ConfigMap/b": true, "Service/web": true, "ConfigMap/same": loadAll, "Service/plain": loadAll}
			for k, v := range want {
				if loaded[k] != v {
					t.Errorf("%s loaded into the server: %v, want %v (loaded: %v)", k, loaded[k], v, loaded)
				}
			}
			for _, tg := range p.Targets {
				for _, res := range tg.Results {
					wantSame := !loadAll && tg.Name == "a" && (res.ID.Name == "same" || res.ID.Name == "plain")
					if res.Same != wantSame {
						t.Errorf("target %s: %s Same = %v, want %v", tg.Name, res.ID.Display(), res.Same, wantSame)
					}
					switch {
					case res.Err != nil:
						t.Errorf("target %s: %s: %s", tg.Name, res.ID.Display(), res.Err.Message)
					case res.Same && (res.Live != nil || res.Merged != nil):
						t.Errorf("target %s: %s is the same, yet was sent", tg.Name, res.ID.Display())
					case !res.Same && (res.Live == nil || res.Merged == nil):
						t.Errorf("target %s: %s was not previewed over its base: live %v, merged %v", tg.Name, res.ID.Display(), res.Live != nil, res.Merged != nil)
					}
				}
			}
		})
	}
}
