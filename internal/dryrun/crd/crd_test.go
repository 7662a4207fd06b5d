package crd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const widgets = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
  - name: v0
    served: false
    storage: false
`

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A custom resource of a CRD the change adds is checked as the API server checks it
// on create: its metadata, the fields its schema does not know, the schema itself.
func TestCheckIsTheServersCheckOfANewCustomResource(t *testing.T) {
	t.Parallel()
	c, kind, ok := Parse(fromYAML(t, widgets), "crds.yaml document 1")
	if !ok || kind.Group != "example.com" || kind.Kind != "Widget" || !c.Namespaced || c.Name() != "widgets.example.com" {
		t.Fatalf("parsed %v %v %v", c, kind, ok)
	}
	if c.Version("v0") != nil || c.Version("v1") == nil || c.Version("v1").Usable() != nil {
		t.Fatalf("versions: v0 %v, v1 %v", c.Version("v0"), c.Version("v1"))
	}
	for _, tc := range []struct {
		doc  string
		want []string // what the problems say, in order; none when it passes
	}{
		{"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\nspec: {size: 2}\n", nil},
		{"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\nspec: {size: 0, colour: red}\n",
			[]string{"spec.size: Invalid value", `unknown field "spec.colour"`}},
		{"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: W_1, namespace: shop}\nspec: {size: 2}\n", []string{"metadata.name: Invalid value"}},
	} {
		got := Check(fromYAML(t, tc.doc).Object, c, c.Version("v1"))
		if len(got) != len(tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.doc, got, tc.want)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q does not say %q", tc.doc, got[i], w)
			}
		}
	}
}
