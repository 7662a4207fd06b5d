package entry

import (
	"encoding/json"
	"testing"

	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report/reporttest"
)

// TestFieldChangesKeyListsByMergeKey: containers, env and ports are matched by their
// keys, not their places, so a reordered or inserted element is one change, and
// annotation keys with dots are quoted.
func TestFieldChangesKeyListsByMergeKey(t *testing.T) {
	live := reporttest.Obj(t, `
metadata: {annotations: {app.kubernetes.io/version: "1.4"}}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: web, image: "web:1.4", env: [{name: A, value: "1"}, {name: B, value: "2"}], ports: [{containerPort: 80}]}
      - {name: log, image: "log:2"}
      args: [a, b]
`)
	merged := reporttest.Obj(t, `
metadata: {annotations: {app.kubernetes.io/version: "1.5"}}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - {name: sidecar, image: "proxy:1"}
      - {name: web, image: "web:1.5", env: [{name: B, value: "2"}, {name: A, value: "1"}, {name: C, value: "3"}], ports: [{containerPort: 80}, {containerPort: 443}]}
      args: [a, b, c]
`)
	got, _ := json.MarshalIndent(fieldChanges(live.Object, merged.Object), "", "  ")
	golden.Check(t, "changes.json", append(got, '\n'))
	if w := whatChanged("Deployment", fieldChanges(live.Object, merged.Object)); w != "image web:1.4 → 1.5, replicas 2 → 3, 6 more fields" {
		t.Errorf("what = %q", w)
	}
}

func TestWhatChangedForData(t *testing.T) {
	live := reporttest.Obj(t, "data: {a: '1', b: '2', c: '3'}\nmetadata: {labels: {x: y}}")
	merged := reporttest.Obj(t, "data: {a: '1', b: '9', d: '4', e: '5'}\nmetadata: {labels: {x: z}}")
	if w := whatChanged("ConfigMap", fieldChanges(live.Object, merged.Object)); w != "data keys +2 −1 ~1, 1 more field" {
		t.Errorf("what = %q", w)
	}
}
