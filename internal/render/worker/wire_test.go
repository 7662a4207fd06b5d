package worker

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// TestAResponseCrossesTheWireWhole: every part of a result (objects with their place
// and notes, failures, notes, inputs) comes back as it was sent, numbers with the
// types a rendering holds.
func TestAResponseCrossesTheWireWhole(t *testing.T) {
	t.Parallel()
	res := &render.Result{
		Objects: []render.Object{
			{Obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "ünïcode", "labels": map[string]any{"a": "<b>&"}},
				"data": map[string]any{"k": "line\nbreak \u2028"}, "n": int64(9007199254740993), "f": 1.5, "big": 1e300, "nul": nil,
				"list": []any{true, false, int64(-3), "x"}}}, Source: "apps/a.yaml", Doc: 2},
			{Obj: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "hook"}}},
				Source: "charts/web/templates/job.yaml", Doc: 1, Item: 3, Notes: []render.Note{{Reason: reason.HelmHook, Message: "a pre-install hook"}}},
			{Obj: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1beta1", "kind": "Run", "metadata": map[string]any{"generateName": "run-", "namespace": "ci"}}},
				Source: "apps/a.yaml", Doc: 3},
		},
		Failures: []render.Failure{{Source: "apps/b.yaml", Doc: 1, Reason: reason.Malformed, Message: "malformed YAML"}},
		Notes:    []string{"a note"},
		Inputs:   render.Inputs{Trees: []string{"apps"}},
	}
	data, err := EncodeResponse(WorkResponse{Result: res})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeResponse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decodedResult(t, got.Result), res) {
		t.Errorf("got %#v\nwant %#v", got.Result, res)
	}
	if len(res.Objects) != 3 {
		t.Errorf("the result sent was modified: %d objects", len(res.Objects))
	}
	for _, resp := range []WorkResponse{{Err: "cannot render"}, {Result: &render.Result{Failures: res.Failures}}} {
		data, err := EncodeResponse(resp)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := DecodeResponse(data); err != nil || !reflect.DeepEqual(got, resp) {
			t.Errorf("got %#v, %v; want %#v", got, err, resp)
		}
	}
}

// decodedResult is r with its objects decoded, as an in-process rendering holds them.
// It checks first that what each held object says of itself without decoding (its
// identity and name) is what its decoded object says.
func decodedResult(t *testing.T, r *render.Result) *render.Result {
	t.Helper()
	if r == nil {
		return nil
	}
	out := *r
	out.Objects = make([]render.Object, len(r.Objects))
	for i, o := range r.Objects {
		id, name := o.ID(), o.Name()
		u := o.Get()
		if want := object.IDOf(u); id != want {
			t.Errorf("%s: identity %#v before decoding, %#v after", o.Where(), id, want)
		}
		if name != u.GetName() {
			t.Errorf("%s: name %q before decoding, %q after", o.Where(), name, u.GetName())
		}
		out.Objects[i] = render.Object{Obj: u, Source: o.Source, Doc: o.Doc, Item: o.Item, Notes: o.Notes}
	}
	return &out
}

// TestAnObjectFromTheWireIsDecodedWhenRead: the worker's objects are held as JSON
// until read; Mentions answers from the JSON, the copies of an Object share what it
// decodes to, and a dropped copy holds nothing.
func TestAnObjectFromTheWireIsDecodedWhenRead(t *testing.T) {
	t.Parallel()
	data, err := EncodeResponse(WorkResponse{Result: &render.Result{Objects: []render.Object{{Obj: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "labels": map[string]any{"x/<y>": "1"}},
		"binaryData": map[string]any{"k": "AA=="}}}, Source: "a.yaml", Doc: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := DecodeResponse(data)
	if err != nil {
		t.Fatal(err)
	}
	o := resp.Result.Objects[0]
	if o.Decoded() || !o.Present() {
		t.Fatalf("the object was decoded on arrival (%v) or is not present (%v)", o.Decoded(), o.Present())
	}
	for s, want := range map[string]bool{"binaryData": true, "x/<y>": true, "data": false, "stringData": false, "b": false} {
		if got := o.Mentions(s); got != want {
			t.Errorf("Mentions(%q) = %v before decoding, want %v", s, got, want)
		}
	}
	if o.ID().Kind != "ConfigMap" || o.Decoded() {
		t.Errorf("reading the identity decoded the object, or read %q", o.ID().Kind)
	}
	cp := o
	u := cp.Get()
	if u == nil || !o.Decoded() || o.Get() != u {
		t.Errorf("a copy's decoding is not shared: %p, %p", u, o.Get())
	}
	if !o.Mentions("data") {
		t.Error("a decoded object must answer Mentions with true")
	}
	cp.Drop()
	if cp.Present() || cp.Get() != nil || o.Get() != u {
		t.Errorf("Drop: the copy is present %v; the original lost its object %v", cp.Present(), o.Get() != u)
	}
}

// TestACutResponseIsAnError: an answer that ends early or runs on past its objects
// (a worker that died while writing) is an error, never fewer objects.
func TestACutResponseIsAnError(t *testing.T) {
	t.Parallel()
	data, err := EncodeResponse(WorkResponse{Result: &render.Result{Objects: configMaps(3)}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) {
		if got, err := DecodeResponse(data[:n]); err == nil {
			t.Fatalf("the first %d of %d bytes decode to %+v without an error", n, len(data), got.Result)
		}
	}
	if _, err := DecodeResponse(append(data[:len(data):len(data)], 0)); err == nil {
		t.Errorf("a byte past the objects decodes without an error")
	}
}

// TestAnObjectTheWireCannotCarryIsAFailureOfItsOwn: an object that does not encode as
// JSON, or that nests deeper than drift reads JSON (one no reader of drift's makes,
// but a renderer might), is a failure naming its place and identity, never the
// target's; the objects beside it cross as they are, one at the limit whole.
func TestAnObjectTheWireCannotCarryIsAFailureOfItsOwn(t *testing.T) {
	t.Parallel()
	obj := func(name, source string, extra any) render.Object {
		return render.Object{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}, "extra": extra}}, Source: source, Doc: 1}
	}
	res := &render.Result{
		Objects: []render.Object{
			obj("a", "a.yaml", "x"),
			obj("too-deep", "b.yaml", nestedValue(maxNesting)),
			obj("nan", "c.yaml", math.NaN()),
			obj("at-limit", "d.yaml", nestedValue(maxNesting-1)),
		},
		Failures: []render.Failure{{Source: "e.yaml", Doc: 1, Reason: reason.Malformed, Message: "malformed YAML"}},
	}
	data, err := EncodeResponse(WorkResponse{Result: res})
	if err != nil {
		t.Fatalf("one object's problem failed the whole answer: %v", err)
	}
	got, err := DecodeResponse(data)
	if err != nil {
		t.Fatalf("one object's problem failed the whole answer: %v", err)
	}
	checkFailures(t, got.Result, map[string]wantFailure{
		"e.yaml document 1": {reason.Malformed, "", "malformed YAML"},
		"b.yaml document 1": {reason.TooLarge, "v1.ConfigMap.ns.too-deep", "the object nests maps and lists more than 10000 levels deep"},
		"c.yaml document 1": {reason.RenderFailed, "v1.ConfigMap.ns.nan", "does not encode as JSON"},
	})
	if kept := strings.Join(ids(got.Result), ","); kept != "v1.ConfigMap.ns.a@a.yaml document 1,v1.ConfigMap.ns.at-limit@d.yaml document 1" {
		t.Fatalf("objects across the wire: %s", kept)
	}
	for i, want := range []render.Object{res.Objects[0], res.Objects[3]} {
		if !object.JSONEqual(got.Result.Objects[i].Get().Object, want.Obj.Object) {
			t.Errorf("%s is not the same object across the wire", want.Where())
		}
	}
	if len(res.Objects) != 4 || len(res.Failures) != 1 {
		t.Errorf("the result sent was modified: %d objects, %d failures", len(res.Objects), len(res.Failures))
	}
}

// TestInlineValuesKeepTheirGoTypesOnTheWayToTheWorker: a template tells int from
// float64 (kindOf, and printing 1e+06 against 1000000), so the request keeps them.
func TestInlineValuesKeepTheirGoTypesOnTheWayToTheWorker(t *testing.T) {
	t.Parallel()
	values := map[string]any{"i": 1000000, "f": 1.0, "u": uint64(1 << 63), "s": "1", "n": nil, "b": true,
		"m": map[string]any{"l": []any{1, 1.5, map[string]any{}}}}
	data, err := EncodeRequest(WorkRequest{Spec: render.Spec{Helm: render.HelmOptions{Values: values}}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := DecodeRequest(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req.Spec.Helm.Values, values) {
		t.Errorf("values = %#v, want %#v", req.Spec.Helm.Values, values)
	}
}

// maxNesting is how deep drift reads an object's maps and lists (render's limit).
const maxNesting = 10000

// nestedValue is n lists, each inside the next.
func nestedValue(n int) any {
	var v any = []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}

// wantFailure is a failure expected at a place: its reason, the identity it names,
// and what its message says.
type wantFailure struct {
	why      reason.Reason
	id, says string
}

// checkFailures fails t unless res's failures are exactly want, by place.
func checkFailures(t *testing.T, res *render.Result, want map[string]wantFailure) {
	t.Helper()
	got := map[string]render.Failure{}
	for _, f := range res.Failures {
		got[f.Where()] = f
	}
	for where, w := range want {
		f, ok := got[where]
		id := ""
		if f.ID != nil {
			id = f.ID.String()
		}
		if !ok || f.Reason != w.why || id != w.id || !strings.Contains(f.Message, w.says) {
			t.Errorf("%s: failure %s %q naming %q; want %s naming %q, saying %q", where, f.Reason, f.Message, id, w.why, w.id, w.says)
		}
	}
	if len(got) != len(want) || len(res.Failures) != len(want) {
		t.Errorf("failures %v; want %d", res.Failures, len(want))
	}
}

// ids are the result's objects, each as its identity at its place.
func ids(res *render.Result) []string {
	var out []string
	for _, o := range res.Objects {
		out = append(out, fmt.Sprintf("%s@%s", o.ID().String(), o.Where()))
	}
	return out
}

// TestAPlainRenderingIsHeldAsTheWireWritesIt: a plain target's objects are held as
// their JSON from the moment they are decoded, so a worker never holds a large
// rendering as maps; what it sends is byte for byte what it sent when it held them
// decoded.
func TestAPlainRenderingIsHeldAsTheWireWritesIt(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"apps/a.yaml":   {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x, labels: {\"x/<y>\": \"&1\"}}\ndata: {n: \"1\", u: \"é \\u2028\"}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {k: v}}\n- {apiVersion: v1, kind: Pod, metadata: {generateName: p-}, spec: {containers: [{name: c, image: i}]}}\n")},
		"apps/b.json":   {Data: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3,"x":1.5,"big":12345678901234567890,"neg":-0.0,"e":1e3}}`)},
		"apps/dup.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\n")},
	}
	spec := render.Spec{Renderer: render.RendererPlain, Path: "apps"}
	held, err := render.RenderWith(fsys, spec, render.DefaultLimits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := render.Plain(fsys, render.Options{Paths: []string{"apps"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(held.Objects) != 4 || len(held.Failures) != 2 {
		t.Fatalf("%d objects and %d failures, want 4 and 2 (the duplicates): %v", len(held.Objects), len(held.Failures), held.Failures)
	}
	for i, o := range held.Objects {
		if _, _, _, ok := o.Held(); !ok || o.Decoded() {
			t.Errorf("object %d (%s) is decoded, not held as JSON", i, o.Where())
		}
		if d := decoded.Objects[i]; o.ID() != d.ID() || o.Name() != d.Name() || o.Where() != d.Where() {
			t.Errorf("object %d: %v %q at %s, decoded it is %v %q at %s", i, o.ID(), o.Name(), o.Where(), d.ID(), d.Name(), d.Where())
		}
	}
	a, err := EncodeResponse(WorkResponse{Result: held})
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeResponse(WorkResponse{Result: decoded})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("the held rendering's wire differs from the decoded one's:\n%q\n%q", a, b)
	}
	if u := held.Objects[3].Get(); u.Object["spec"].(map[string]any)["replicas"] != int64(3) {
		t.Errorf("a held object decodes replicas as %T, want int64 as the object decoded", held.Objects[3].Get().Object["spec"].(map[string]any)["replicas"])
	}
}
