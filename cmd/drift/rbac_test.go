package main

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

func TestForbiddenNamesVerbResourceNamespaceAndUser(t *testing.T) {
	ns := namespace(t)
	// A read-only user: get and list on ConfigMaps in the namespace, nothing else.
	apply(t, "kubectl", sub(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: read-configmaps, namespace: NS}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: read-configmaps}
subjects:
- {kind: User, name: reader, apiGroup: rbac.authorization.k8s.io}
`, ns))
	kubeconfig, err := env.AddUser("reader")
	if err != nil {
		t.Fatal(err)
	}
	r := repo(t, map[string]string{
		"cm.yaml":     sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS}\ndata: {a: b}\n", ns),
		"secret.yaml": sub("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: NS}\nstringData: {token: never-shown}\n", ns),
	})
	o := driftWith(t, kubeconfig, "diff", "--repo", r.Dir, "--ref", "main", "-o", "json")
	rep := decodeReport(t, o)
	if o.code != 2 || rep.Complete {
		t.Fatalf("exit %d complete %v\n%s", o.code, rep.Complete, o.stderr)
	}
	cm := find(t, rep, "ConfigMap", "settings")
	if cm.Category != report.Error || cm.ErrorReason != "forbidden" ||
		!strings.Contains(cm.Error, "user reader may not patch configmaps in namespace "+ns) {
		t.Errorf("configmap: %s %s %q", cm.Category, cm.ErrorReason, cm.Error)
	}
	sec := find(t, rep, "Secret", "creds")
	if sec.ErrorReason != "forbidden" || !strings.Contains(sec.Error, "user reader may not get secrets in namespace "+ns) {
		t.Errorf("secret: %s %q", sec.ErrorReason, sec.Error)
	}
	if strings.Contains(o.stdout+o.stderr, "never-shown") {
		t.Errorf("a Secret value reached the output")
	}
}
