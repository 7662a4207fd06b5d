package fidelity

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The workload: one object for each way a prediction can go wrong. Each is applied
// as base, then changed (or not) in head. NS is replaced by the cell's namespace.
var workload = []struct {
	name, base, head string
	// csaFirst: base is applied with plain kubectl apply (client-side), head with the
	// profile; only server-side profiles run it.
	csaFirst bool
}{
	{name: "unchanged",
		base: cm("unchanged", "", `{a: "1"}`),
		head: cm("unchanged", "", `{a: "1"}`)},
	{name: "edited",
		base: cm("edited", "labels: {keep: kept, drop: dropped}, annotations: {keep: kept, gone: gone}", `{a: "1", b: "2"}`),
		head: cm("edited", "labels: {keep: kept}, annotations: {keep: kept}", `{a: "2"}`)},
	{name: "labelled-by-hand",
		base: cm("labelled-by-hand", "labels: {app: shop}", `{a: "1"}`),
		head: cm("labelled-by-hand", "labels: {app: shop}", `{a: "2"}`)},
	{name: "deployment",
		base: deployment("web:1.4", `[{name: A, value: a}, {name: B, value: b}, {name: C, value: c}]`, `[{containerPort: 80, name: http}, {containerPort: 9090, name: metrics}]`),
		head: deployment("web:1.5", `[{name: A, value: a}, {name: C, value: c2}, {name: D, value: d}]`, `[{containerPort: 80, name: http}]`)},
	{name: "secret",
		base: "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: NS}\ntype: Opaque\ndata: {user: YWRtaW4=, password: b2xk}\n",
		head: "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: NS}\ntype: Opaque\ndata: {user: YWRtaW4=, password: bmV3}\n"},
	{name: "service",
		base: "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: NS}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: 8080}, {name: metrics, port: 9090}]\n",
		head: "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: NS}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: 8081}]\n"},
	{name: "new-service",
		head: "apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: NS}\nspec:\n  type: NodePort\n  selector: {app: api}\n  ports: [{name: http, port: 80}]\n"},
	{name: "custom-resource",
		base: "apiVersion: fidelity.drift.dev/v1\nkind: Widget\nmetadata: {name: gear, namespace: NS, labels: {tier: a}}\nspec: {size: 3, color: red, parts: [{name: a, count: 1}, {name: b, count: 2}]}\n",
		head: "apiVersion: fidelity.drift.dev/v1\nkind: Widget\nmetadata: {name: gear, namespace: NS}\nspec: {size: 4, parts: [{name: a, count: 1}]}\n"},
	{name: "client-side-first", csaFirst: true,
		base: cm("client-side-first", "labels: {keep: kept, drop: dropped}", `{a: "1", b: "2"}`),
		head: cm("client-side-first", "labels: {keep: kept}", `{a: "2"}`)},
	{name: "client-side-first-deployment", csaFirst: true,
		base: strings.ReplaceAll(deployment("web:1.4", `[{name: A, value: a}, {name: B, value: b}]`, `[{containerPort: 80, name: http}]`), "name: web,", "name: csa-web,"),
		head: strings.ReplaceAll(deployment("web:1.5", `[{name: A, value: a}]`, `[{containerPort: 80, name: http}]`), "name: web,", "name: csa-web,")},
}

func cm(name, meta, data string) string {
	if meta != "" {
		meta = ", " + meta
	}
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: NS" + meta + "}\ndata: " + data + "\n"
}

// deployment omits every default (replicas, strategy, protocol, pull policy...): an
// HPA-like manager owns replicas.
func deployment(image, env, ports string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: NS}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - {name: web, image: \"" + image + "\", env: " + env + ", ports: " + ports + "}\n"
}

// widgetCRD is the CRD of the workload's custom resource.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.fidelity.drift.dev}
spec:
  group: fidelity.drift.dev
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
              size: {type: integer}
              color: {type: string}
              mode: {type: string, default: normal}
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    count: {type: integer}
`

func decode(t *testing.T, doc, ns string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(doc, "NS", ns)), &u.Object); err != nil {
		t.Fatalf("workload: %v\n%s", err, doc)
	}
	return u
}
