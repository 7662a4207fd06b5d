package render

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// nested is a list nested n levels deep, as YAML's flow style and JSON write it.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// nestedValue is what nested(n) decodes to.
func nestedValue(n int) any {
	var v any = []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}

// deepConfigMap is a ConfigMap whose field extra holds nested(n): the object nests
// n+1 levels deep.
func deepConfigMap(name string, n int) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\nextra: %s\n", name, nested(n))
}

// wantFailure is a failure a test expects at a place: its reason, the identity it
// names ("" for none) and a part of its message.
type wantFailure struct {
	why      reason.Reason
	id, says string
}

// checkFailures fails t unless res's failures are exactly want, by place.
func checkFailures(t *testing.T, res *Result, want map[string]wantFailure) {
	t.Helper()
	got := map[string]Failure{}
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

// TestADocumentNestedDeeperThanJSONReadsIsAFailureOfItsOwn: a document nested past
// maxNesting, which YAML reads and kubectl's JSON does not, is a too-large failure
// naming its file, its number and the object its top level names, however it is
// written (brackets, indentation, JSON, in a List); one deeper than the YAML parser
// reads is malformed YAML at its place. The other documents are read, those at the
// limit whole, and every object read crosses the render wire and decodes as it was.
func TestADocumentNestedDeeperThanJSONReadsIsAFailureOfItsOwn(t *testing.T) {
	t.Parallel()
	at, over := maxNesting-1, maxNesting // the list in an object at the limit, and one past it
	fsys := fstest.MapFS{
		"good.yaml":  file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n"),
		"deep.yaml":  file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n" + deepConfigMap("deep", over)),
		"deep.json":  file(fmt.Sprintf(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep-json", "namespace": "ns"}, "extra": %s}`, nested(over))),
		"block.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: block}\nextra:\n" + strings.Repeat("- ", 6000) + nested(5000) + "\n"),
		// The item alone is within the limit; the List document, as kubectl reads it, is not.
		"list.yaml":  file("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: in-list}\n  extra: " + nested(over-2) + "\n"),
		"over.yaml":  file(deepConfigMap("over-parser", maxNesting+1)),
		"limit.yaml": file(deepConfigMap("limit", at)),
		"limit.json": file(fmt.Sprintf(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limit-json"}, "extra": %s}`, nested(at))),
	}
	res, err := Plain(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tooDeep := "nests maps and lists more than 10000 levels deep"
	checkFailures(t, res, map[string]wantFailure{
		"deep.yaml document 2":  {reason.TooLarge, "v1.ConfigMap.deep", tooDeep},
		"deep.json document 1":  {reason.TooLarge, "v1.ConfigMap.ns.deep-json", tooDeep},
		"block.yaml document 1": {reason.TooLarge, "v1.ConfigMap.block", tooDeep},
		"list.yaml document 1":  {reason.TooLarge, "", tooDeep},
		"over.yaml document 1":  {reason.Malformed, "", "exceeded max depth of 10000"},
	})
	got := strings.Join(ids(res), "\n")
	want := "v1.ConfigMap.first@deep.yaml document 1\nv1.ConfigMap.good@good.yaml document 1\nv1.ConfigMap.limit-json@limit.json document 1\nv1.ConfigMap.limit@limit.yaml document 1"
	if got != want {
		t.Fatalf("objects:\n%s\nwant:\n%s", got, want)
	}
	for _, o := range res.Objects[2:] {
		if !object.JSONEqual(o.Get().Object["extra"], nestedValue(at)) {
			t.Errorf("%s: the list at the limit is not read whole", o.Where())
		}
	}
	sent, err := CrossWire(res)
	if err != nil {
		t.Fatalf("the objects the reader read do not cross the wire: %v", err)
	}
	if len(sent.Objects) != len(res.Objects) || len(sent.Failures) != len(res.Failures) {
		t.Fatalf("across the wire: %d objects, %d failures; want %d, %d", len(sent.Objects), len(sent.Failures), len(res.Objects), len(res.Failures))
	}
	for i, o := range sent.Objects {
		if !object.JSONEqual(o.Get().Object, res.Objects[i].Get().Object) {
			t.Errorf("%s is not the same object across the wire", o.Where())
		}
	}
}

// TestATooDeepDocumentFailsAloneInEveryRenderer: a document nested past maxNesting
// beside good ones, rendered by the render workers as a run renders it (plain files,
// a kustomization's resource, a chart's CRD), is one failure naming its file and
// object; the good objects, and those at the limit, are all there.
func TestATooDeepDocumentFailsAloneInEveryRenderer(t *testing.T) {
	t.Parallel()
	good := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n"
	files := map[string]string{
		"plain/good.yaml":            good,
		"plain/deep.yaml":            strings.Replace(good, "good", "first", 1) + "---\n" + deepConfigMap("deep", maxNesting),
		"plain/limit.yaml":           deepConfigMap("limit", maxNesting-1),
		"kust/kustomization.yaml":    "resources: [good.yaml, deep.yaml, limit.yaml]\nnamePrefix: k-\n",
		"kust/good.yaml":             good,
		"kust/deep.yaml":             deepConfigMap("deep", maxNesting),
		"kust/limit.yaml":            deepConfigMap("limit", maxNesting-1),
		"chart/Chart.yaml":           "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
		"chart/crds/deep.yaml":       deepConfigMap("deep", maxNesting),
		"chart/templates/good.yaml":  good,
		"chart/templates/limit.yaml": deepConfigMap("limit", maxNesting-1),
	}
	root := t.TempDir()
	repo, err := gitfixture.Init(root)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.CommitFiles(files, "deep documents")
	if err != nil {
		t.Fatal(err)
	}
	tooDeep := "nests maps and lists more than 10000 levels deep"
	cases := []struct {
		spec    Spec
		failure map[string]wantFailure
		objects string
	}{
		{Spec{Path: "plain", Renderer: RendererPlain},
			map[string]wantFailure{"plain/deep.yaml document 2": {reason.TooLarge, "v1.ConfigMap.deep", tooDeep}},
			"v1.ConfigMap.first@plain/deep.yaml document 1\nv1.ConfigMap.good@plain/good.yaml document 1\nv1.ConfigMap.limit@plain/limit.yaml document 1"},
		{Spec{Path: "kust", Renderer: RendererKustomize},
			map[string]wantFailure{"kust/deep.yaml": {reason.TooLarge, "v1.ConfigMap.k-deep", "resource 2 of the build " + tooDeep}},
			"v1.ConfigMap.k-good@kust/good.yaml\nv1.ConfigMap.k-limit@kust/limit.yaml"},
		{Spec{Path: "chart", Renderer: RendererHelm, Helm: HelmOptions{ReleaseName: "r"}},
			map[string]wantFailure{"chart/crds/deep.yaml document 1": {reason.TooLarge, "v1.ConfigMap.deep", tooDeep}},
			"v1.ConfigMap.good@chart/templates/good.yaml document 1\nv1.ConfigMap.limit@chart/templates/limit.yaml document 1"},
	}
	// Side by side, as a run asks: the targets go to the workers in one batch.
	cache := NewTestCache(root, nil)
	results := make([]*Result, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases {
		wg.Go(func() {
			res, err := cache.Render(commit, nil, tc.spec)
			if err != nil {
				t.Errorf("%s: %v", tc.spec.Path, err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	for i, tc := range cases {
		res := results[i]
		if res == nil {
			continue
		}
		checkFailures(t, res, tc.failure)
		if got := strings.Join(ids(res), "\n"); got != tc.objects {
			t.Errorf("%s: objects:\n%s\nwant:\n%s", tc.spec.Path, got, tc.objects)
		}
		for _, o := range res.Objects {
			if o.ID().Name != "limit" && o.ID().Name != "k-limit" {
				continue
			}
			if !object.JSONEqual(o.Get().Object["extra"], nestedValue(maxNesting-1)) {
				t.Errorf("%s: the list at the limit did not cross whole", o.Where())
			}
		}
	}
}
