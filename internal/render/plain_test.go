package render

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/reason"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func ids(res *Result) []string {
	var out []string
	for _, o := range res.Objects {
		out = append(out, fmt.Sprintf("%s@%s", o.ID().String(), o.Where()))
	}
	return out
}

func TestPlainWalksInStableOrderAndKeepsProvenance(t *testing.T) {
	fsys := fstest.MapFS{
		"b/two.yml":            file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n"),
		"a/one.yaml":           file("# comment only\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\n---\n# empty\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: x}\n"),
		"a/list.json":          file(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l1"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l2"}}]}`),
		"a/notes.txt":          file("not a manifest"),
		".github/wf.yaml":      file("on: push\n"),
		".git/config.yaml":     file("x: y\n"),
		"a/.hidden/x.yaml":     file("x: y\n"),
		".pre-commit.yaml":     file("repos: []\n"),
		"c/typed.yaml":         file("apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: t1}\n"),
		"c/deep/deeper/x.yaml": file("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: shop}\n"),
	}
	res, err := Plain(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 0 {
		t.Fatalf("unexpected failures: %v", res.Failures)
	}
	got := strings.Join(ids(res), "\n")
	want := strings.Join([]string{
		"v1.ConfigMap.l1@a/list.json document 1 item 1",
		"v1.ConfigMap.l2@a/list.json document 1 item 2",
		"v1.ConfigMap.one@a/one.yaml document 1",
		"v1.Secret.x.s@a/one.yaml document 4",
		"v1.ConfigMap.two@b/two.yml document 1",
		"apps.v1.Deployment.shop.d@c/deep/deeper/x.yaml document 1",
		"v1.ConfigMap.t1@c/typed.yaml document 1 item 1",
	}, "\n")
	if got != want {
		t.Fatalf("objects:\n%s\nwant:\n%s", got, want)
	}
	// Documents are numbered as a reader counts them, empty ones included.
	if res.Objects[3].Doc != 4 {
		t.Fatalf("secret doc = %d, want 4", res.Objects[3].Doc)
	}
}

func TestPlainReportsBadDocumentsAndKeepsTheRest(t *testing.T) {
	fsys := fstest.MapFS{
		"apps/bad.yaml":  file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\nkind: ConfigMap\nmetadata: {name: noversion}\n---\napiVersion: v1\nmetadata: {name: nokind}\n---\nfoo: [unclosed\n---\n- just\n- a list\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: gen-}\n---\napiVersion: a/b/c\nkind: X\nmetadata: {name: why}\n"),
		"apps/good.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n"),
	}
	res, err := Plain(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(res), ","); got != "v1.ConfigMap.ok@apps/bad.yaml document 1,v1.ConfigMap.gen-@apps/bad.yaml document 6,v1.ConfigMap.good@apps/good.yaml document 1" {
		t.Fatalf("objects = %s", got)
	}
	want := []string{
		"apps/bad.yaml document 2: ConfigMap (metadata.name \"noversion\") has no apiVersion",
		"apps/bad.yaml document 3: object of apiVersion v1 (metadata.name \"nokind\") has no kind",
		"apps/bad.yaml document 4: malformed YAML: yaml: line 1: did not find expected ',' or ']'",
		"apps/bad.yaml document 5: document is a list, not a Kubernetes object (a mapping with apiVersion and kind)",
		"apps/bad.yaml document 7: X (metadata.name \"why\"): invalid apiVersion \"a/b/c\": unexpected GroupVersion string: a/b/c",
	}
	if len(res.Failures) != len(want) {
		t.Fatalf("failures = %v", res.Failures)
	}
	for i, f := range res.Failures {
		if f.Error() != want[i] {
			t.Errorf("failure %d:\n got %s\nwant %s", i, f.Error(), want[i])
		}
	}
}

func TestPlainRejectsDuplicatesNamingBothPlaces(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup, namespace: x}\n"),
		"b.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup, namespace: x}\n"),
		"c.yaml": file("apiVersion: v2\nkind: ConfigMap\nmetadata: {name: dup, namespace: yy}\n"),
	}
	res, err := Plain(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(res), ","); got != "v1.ConfigMap.x.other@b.yaml document 1,v2.ConfigMap.yy.dup@c.yaml document 1" {
		t.Fatalf("objects = %s", got)
	}
	if len(res.Failures) != 2 {
		t.Fatalf("failures = %v", res.Failures)
	}
	msgs := res.Failures[0].Error() + "\n" + res.Failures[1].Error()
	for _, want := range []string{
		"a.yaml document 1: v1 ConfigMap x/dup is defined more than once: also at b.yaml document 2",
		"b.yaml document 2: v1 ConfigMap x/dup is defined more than once: also at a.yaml document 1",
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("missing %q in:\n%s", want, msgs)
		}
	}
}

func TestPlainFailsFastOnHostileInput(t *testing.T) {
	bomb := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  x: \"" + strings.Repeat("a", 2048) + "\"\n"
	fsys := fstest.MapFS{
		"bomb.yaml": file(bomb),
		"big.yaml":  file(big + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: small}\n"),
		"huge.yaml": file(strings.Repeat("# padding\n", 1000)),
	}
	// The alias bomb is refused by the YAML decoder's aliasing limit, not expanded.
	res, err := Plain(fsys, Options{MaxDocumentBytes: 1024, MaxFileBytes: 8000})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, f := range res.Failures {
		msgs = append(msgs, f.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"big.yaml document 1: document is 2.1 KiB, over the 1.0 KiB limit per document",
		"bomb.yaml document 1: malformed YAML: yaml: document contains excessive aliasing",
		"huge.yaml: file is 9.8 KiB, over the 7.8 KiB limit: not read",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if got := strings.Join(ids(res), ","); got != "v1.ConfigMap.small@big.yaml document 2" {
		t.Fatalf("objects = %s", got)
	}
}

func TestPlainErrorsNeverQuoteDocumentContent(t *testing.T) {
	fsys := fstest.MapFS{
		"s.yaml": file("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: hunter2hunter2\n  bad: [\n"),
	}
	res, err := Plain(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || strings.Contains(res.Failures[0].Error(), "hunter2") {
		t.Fatalf("failure leaks content or is missing: %v", res.Failures)
	}
}

func TestPlainNamedFileAndMissingPath(t *testing.T) {
	fsys := fstest.MapFS{
		"a/x.yaml":   file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
		"a/y.yaml":   file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yy}\n"),
		"b/yes.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yes, namespace: \"y\"}\n"),
		"README.md":  file("# hi"),
	}
	res, err := Plain(fsys, Options{Paths: []string{"a/x.yaml", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(res), ","); got != "v1.ConfigMap.x@a/x.yaml document 1,v1.ConfigMap.yy@a/y.yaml document 1" {
		t.Fatalf("objects = %s (a file named twice must be read once)", got)
	}
	res, err = Plain(fsys, Options{Paths: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Error() != "b/yes.yaml document 1: ConfigMap: metadata.name is a boolean, not a string: quote it (YAML reads y, yes, no, on, off and numbers as non-strings)" {
		t.Fatalf("want a YAML 1.1 boolean name failure, got %v", res.Failures)
	}
	if _, err := Plain(fsys, Options{Paths: []string{"README.md"}}); err == nil || !strings.Contains(err.Error(), "not a manifest file") {
		t.Fatalf("want not a manifest error, got %v", err)
	}
}

// An Argo CD directory source: not recursive unless recurse, include and exclude
// globs over paths relative to the directory, with {a,b} alternatives and '*'
// crossing '/', as Argo CD's repo server matches them.
func TestADirectoryIsReadAsArgoCDReadsIt(t *testing.T) {
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" }
	fsys := fstest.MapFS{
		"app/a.yaml":          {Data: []byte(cm("a"))},
		"app/b.yml":           {Data: []byte(cm("b"))},
		"app/c.json":          {Data: []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`)},
		"app/sub/d.yaml":      {Data: []byte(cm("d"))},
		"app/sub/deep/e.yaml": {Data: []byte(cm("e"))},
	}
	for _, c := range []struct {
		dir  DirectoryOptions
		want string
	}{
		{DirectoryOptions{}, "a b c"},
		{DirectoryOptions{Recurse: true}, "a b c d e"},
		{DirectoryOptions{Recurse: true, Include: "{a.yaml,sub/*}"}, "a d e"},
		{DirectoryOptions{Recurse: true, Exclude: "*.json"}, "a b d e"},
		{DirectoryOptions{Recurse: true, Include: "*.yaml", Exclude: "sub/deep/*"}, "a d"},
		{DirectoryOptions{Recurse: true, Include: "[unclosed"}, ""},
	} {
		res, err := Plain(fsys, Options{Paths: []string{"app"}, Directory: &c.dir})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range res.Objects {
			names = append(names, o.Get().GetName())
		}
		sort.Strings(names)
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("%+v: %q, want %q", c.dir, got, c.want)
		}
	}
}

// A JSON document is read as JSON, as kubectl reads it (YAMLOrJSONDecoder): "\/" is a
// slash and a key given twice takes its last value (kubectl v1.32, dry run on a server:
// {"k":"last","path":"a/b"}); YAML that only begins as JSON does, "{apiVersion: v1}",
// is still YAML.
func TestJSONDocumentsAreReadAsKubectlReadsThem(t *testing.T) {
	fsys := fstest.MapFS{
		"cm.json":   file(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "esc", "namespace": "default"}, "data": {"path": "a\/b", "k": "first", "k": "last"}}` + "\n"),
		"flow.yaml": file("{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}, data: {a: b}}\n"),
	}
	res, err := Plain(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 0 || len(res.Objects) != 2 {
		t.Fatalf("objects %v, failures %v; want two objects", ids(res), res.Failures)
	}
	for _, o := range res.Objects {
		data, _, _ := unstructured.NestedStringMap(o.Get().Object, "data")
		switch o.Get().GetName() {
		case "esc":
			if data["path"] != "a/b" || data["k"] != "last" {
				t.Errorf("cm.json data %v, want path a/b and k last", data)
			}
		case "flow":
			if data["a"] != "b" || len(data) != 1 {
				t.Errorf("flow.yaml data %v, want a: b", data)
			}
		}
	}
}

// TestObjectsOnlyReadsObjectsAndNamesTheRest: with ObjectsOnly, a values file, a
// Chart.yaml (apiVersion, no kind), a list of plays and a scalar are no objects and
// no failures, and one note names their files; an object in the same file is read,
// and malformed YAML is still a failure.
func TestObjectsOnlyReadsObjectsAndNamesTheRest(t *testing.T) {
	fsys := fstest.MapFS{
		"values.yaml":  {Data: []byte("replicas: 2\n")},
		"Chart.yaml":   {Data: []byte("apiVersion: v2\nname: web\nversion: 0.1.0\n")},
		"play.yml":     {Data: []byte("- hosts: all\n")},
		"mixed.yaml":   {Data: []byte("just text\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n")},
		"broken.yaml":  {Data: []byte("a: [b\n")},
		"objects.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: also}\n")},
	}
	res, err := Plain(fsys, Options{ObjectsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range res.Objects {
		names = append(names, o.Name())
	}
	if strings.Join(names, " ") != "kept also" {
		t.Errorf("objects %v", names)
	}
	if len(res.Failures) != 1 || res.Failures[0].Source != "broken.yaml" || res.Failures[0].Reason != reason.Malformed {
		t.Errorf("failures %+v, want broken.yaml malformed", res.Failures)
	}
	if len(res.Notes) != 1 || res.Notes[0] != "Chart.yaml, mixed.yaml, play.yml, values.yaml hold YAML that is no Kubernetes object (no apiVersion or kind): not previewed, as nothing applies it" {
		t.Errorf("notes %q", res.Notes)
	}
	// Without it, each is an error, as kubectl apply -f would refuse it.
	res, err = Plain(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 5 || len(res.Notes) != 0 {
		t.Errorf("without ObjectsOnly: failures %+v notes %q", res.Failures, res.Notes)
	}
}
