// Package fidelity holds the fidelity matrix: for every applier profile, a base is
// applied with the real applier's own code, drift predicts the head under that
// profile, the head is applied with the same code, and every predicted object must
// equal the live object after the apply; a second prediction must then find nothing
// to change. make fidelity prints the matrix.
package fidelity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	code := testenv.Main(m, func(e *testenv.Env) { env = e })
	if len(matrix) > 0 {
		fmt.Print("fidelity matrix (profile × objects checked × mismatches)\n" + printMatrix())
	}
	os.Exit(code)
}

// A realApplier applies objects as one real applier does, with that applier's own
// code (the kubectl binary, fluxcd/pkg/ssa, the Helm SDK, kubectl's apply code).
type realApplier struct {
	// profile is drift's name for the applier.
	profile string
	owner   applier.Owner
	// serverSide: the applier applies server-side, so the workload's objects first
	// applied with plain kubectl apply are part of its cell.
	serverSide bool
	// apply applies objs, all in namespace ns, for real; step is "base" or "head".
	apply func(t *testing.T, ns, step string, objs []*unstructured.Unstructured)
	// options adds what drift needs to know about the deployed state (a Helm
	// release) before it predicts.
	options func(t *testing.T, ns string, opts *dryrun.Options)
}

// cell is one row of the matrix.
type cell struct {
	profile    string
	checked    int
	mismatches []string
}

var (
	matrixMu sync.Mutex
	matrix   []cell
)

// runCell runs the whole workload under one profile in its own namespace.
func runCell(t *testing.T, a realApplier) {
	ctx := context.Background()
	ns := "fidelity-" + a.profile
	direct := dynamic.NewForConfigOrDie(env.Config)
	clients, err := kube.NewClients(env.Config, 8)
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "-f", "-", "<<apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	kubectl(t, "apply", "--server-side", "-f", "-", "<<"+widgetCRD)
	kubectl(t, "wait", "--for=condition=Established", "crd/widgets.fidelity.drift.dev")
	clients.Mapper.Reset()

	var base, head, csaBase []*unstructured.Unstructured
	for _, w := range workload {
		if w.csaFirst && !a.serverSide {
			continue
		}
		switch {
		case w.base == "":
		case w.csaFirst:
			csaBase = append(csaBase, decode(t, w.base, ns))
		default:
			base = append(base, decode(t, w.base, ns))
		}
		head = append(head, decode(t, w.head, ns))
	}
	a.apply(t, ns, "base", base)
	for _, o := range csaBase {
		data, _ := json.Marshal(o.Object)
		kubectl(t, "apply", "-f", "-", "<<"+string(data))
	}
	// Other managers: an HPA-like controller owns the Deployment's replicas, and
	// someone labelled an object by hand.
	scale := fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":%q},"spec":{"replicas":3}}`, ns)
	if _, err := direct.Resource(deployments).Namespace(ns).Patch(ctx, "web", types.MergePatchType, []byte(scale),
		metav1.PatchOptions{FieldManager: "kube-controller-manager"}, "scale"); err != nil {
		t.Fatalf("scaling as the HPA does: %v", err)
	}
	kubectl(t, "label", "-n", ns, "configmap", "labelled-by-hand", "hand=yes")

	predict := func() []dryrun.Result {
		opts := dryrun.Options{Applier: appliersOf(t, a.profile), Appliers: appliers.All(), Owner: a.owner, Namespace: ns}
		if a.options != nil {
			a.options(t, ns, &opts)
		}
		objs := make([]render.Object, len(head))
		for i, o := range head {
			objs[i] = render.Object{Obj: o.DeepCopy(), Source: "workload.yaml", Doc: i + 1}
		}
		return dryrun.Run(ctx, clients, objs, opts)
	}
	predicted := predict()
	a.apply(t, ns, "head", head)

	c := cell{profile: a.profile}
	for _, r := range predicted {
		c.checked++
		if r.Err != nil {
			c.mismatches = append(c.mismatches, fmt.Sprintf("%s: drift could not predict it: %s", r.ID.Display(), r.Err.Message))
			continue
		}
		live, err := liveOf(ctx, clients, direct, r)
		if err != nil {
			t.Fatal(err)
		}
		got, want := comparable(r.Merged, r.Live == nil), comparable(live, r.Live == nil)
		if got != want {
			c.mismatches = append(c.mismatches, fmt.Sprintf("%s: predicted and applied differ:\n%s", r.ID.Display(), lineDiff(got, want)))
		}
	}
	// A second run right after the apply: nothing to change.
	for _, r := range predict() {
		if r.Err != nil {
			c.mismatches = append(c.mismatches, fmt.Sprintf("%s: second run: %s", r.ID.Display(), r.Err.Message))
			continue
		}
		if got, want := shown(r.Merged), shown(r.Live); got != want {
			c.mismatches = append(c.mismatches, fmt.Sprintf("%s: second run after the apply reports a change:\n%s", r.ID.Display(), lineDiff(want, got)))
		}
	}
	matrixMu.Lock()
	matrix = append(matrix, c)
	matrixMu.Unlock()
	for _, m := range c.mismatches {
		t.Error(m)
	}
}

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func liveOf(ctx context.Context, c *kube.Clients, direct dynamic.Interface, r dryrun.Result) (*unstructured.Unstructured, error) {
	mapping, err := c.Mapper.RESTMapping(r.ID.GroupKind(), r.ID.Version)
	if err != nil {
		return nil, err
	}
	var res dynamic.ResourceInterface = direct.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		res = direct.Resource(mapping.Resource).Namespace(r.ID.Namespace)
	}
	live, err := res.Get(ctx, r.ID.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// comparable is an object as the matrix compares it: managedFields without their
// timestamps, and without what differs between any two writes of the same content
// (resourceVersion, generation). For a new object, what only the real create can
// know (uid, creationTimestamp, allocated IPs and ports) is marked, not compared.
func comparable(u *unstructured.Unstructured, isNew bool) string {
	if u == nil {
		return "<none>"
	}
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(u.Object, "metadata", "generation")
	mf := u.GetManagedFields()
	for i := range mf {
		mf[i].Time = nil
	}
	sort.SliceStable(mf, func(i, j int) bool {
		return mf[i].Manager+string(mf[i].Operation)+mf[i].Subresource < mf[j].Manager+string(mf[j].Operation)+mf[j].Subresource
	})
	u.SetManagedFields(mf)
	if isNew {
		markAllocated(u)
	}
	data, _ := json.MarshalIndent(u.Object, "", "  ")
	return string(data)
}

// shown is an object as a report shows it: without managedFields.
func shown(u *unstructured.Unstructured) string {
	if u == nil {
		return "<none>"
	}
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	return comparable(u, false)
}

func markAllocated(u *unstructured.Unstructured) {
	const allocated = "(allocated)"
	_ = unstructured.SetNestedField(u.Object, "(generated)", "metadata", "uid")
	_ = unstructured.SetNestedField(u.Object, "(generated)", "metadata", "creationTimestamp")
	if u.GetKind() != "Service" {
		return
	}
	if _, ok, _ := unstructured.NestedString(u.Object, "spec", "clusterIP"); ok {
		_ = unstructured.SetNestedField(u.Object, allocated, "spec", "clusterIP")
	}
	if ips, ok, _ := unstructured.NestedSlice(u.Object, "spec", "clusterIPs"); ok {
		for i := range ips {
			ips[i] = allocated
		}
		_ = unstructured.SetNestedSlice(u.Object, ips, "spec", "clusterIPs")
	}
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	for _, p := range ports {
		if pm, ok := p.(map[string]any); ok && pm["nodePort"] != nil {
			pm["nodePort"] = allocated
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
}

// lineDiff shows the lines of want and got that differ, in order.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	i, j := 0, 0
	for i < len(g) || j < len(w) {
		switch {
		case i < len(g) && j < len(w) && g[i] == w[j]:
			i++
			j++
		case j < len(w) && !slices.Contains(g[i:], w[j]):
			fmt.Fprintf(&b, "  applied:   %s\n", w[j])
			j++
		case i < len(g):
			fmt.Fprintf(&b, "  predicted: %s\n", g[i])
			i++
		default:
			j++
		}
	}
	return b.String()
}

// kubectl runs the real kubectl binary against the test server; an argument
// starting with "<<" is its standard input.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	var stdin string
	var rest []string
	for _, a := range args {
		if strings.HasPrefix(a, "<<") {
			stdin = strings.TrimPrefix(a, "<<")
			continue
		}
		rest = append(rest, a)
	}
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", env.Kubeconfig}, rest...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(rest, " "), err, out.String())
	}
	return out.String()
}

// printMatrix is the matrix the cells filled, as a markdown table.
func printMatrix() string {
	matrixMu.Lock()
	defer matrixMu.Unlock()
	sort.Slice(matrix, func(i, j int) bool { return matrix[i].profile < matrix[j].profile })
	var b strings.Builder
	b.WriteString("| profile | objects checked | mismatches |\n|---|---|---|\n")
	for _, c := range matrix {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", c.profile, c.checked, len(c.mismatches))
	}
	return b.String()
}

// appliersOf is drift's applier of name.
func appliersOf(t *testing.T, name string) applier.Applier {
	t.Helper()
	a := appliers.All().Get(applier.Name(name))
	if a == nil {
		t.Fatalf("no applier %s", name)
	}
	return a
}
