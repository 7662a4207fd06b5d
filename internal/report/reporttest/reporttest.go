// Package reporttest makes the dry-run results and report inputs the report's tests
// build from, so that the packages that build, scrub and write reports test the same
// synthetic run.
package reporttest

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
)

// Obj decodes an object from YAML.
func Obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// Result is the dry-run result of the object rendered from document doc of source:
// live and merged are the live object and the prediction ("" for none).
func Result(t testing.TB, source string, doc int, rendered, live, merged string) dryrun.Result {
	t.Helper()
	r := dryrun.Result{Object: render.Object{Obj: Obj(t, rendered), Source: source, Doc: doc}}
	r.ID = object.IDOf(r.Object.Get())
	if live != "" {
		r.Live = Obj(t, live)
	}
	if merged != "" {
		r.Merged = Obj(t, merged)
	}
	return r
}

// B64 is s in standard base64, as a Secret's data holds it.
func B64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// SampleInput has one object of every category, a warning, a Secret and a render
// failure.
func SampleInput(t testing.TB) report.Input {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {color: green}\n"
	cmLive := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop, uid: u1, resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: kubectl}]}\ndata: {color: blue, size: '3'}\n"
	cmMerged := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop, uid: u1, resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: kubectl}]}\ndata: {color: green, size: '3'}\n"
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n"
	svcMerged := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop, uid: new, resourceVersion: '1', creationTimestamp: '2026-01-02T00:00:00Z'}\nspec: {clusterIP: 10.0.0.0, clusterIPs: [10.0.0.0], ports: [{port: 80, protocol: TCP, targetPort: 80}], type: ClusterIP}\n"
	sec := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData: {password: s3cr3t-new, user: admin}\n"
	secLive := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"s3cr3t-old\"}}'}}\ndata: {password: " + B64("s3cr3t-old") + ", user: " + B64("admin") + "}\n"
	secMerged := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"s3cr3t-old\"}}'}}\ndata: {password: " + B64("s3cr3t-new") + ", user: " + B64("admin") + "}\n"
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 2}\n"
	depLive := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, generation: 3}\nspec: {replicas: 2}\n"
	bad := "apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: shop}\nstringData: {key: '@someone ```leak'}\n"

	r := []dryrun.Result{
		Result(t, "shop/config.yaml", 1, cm, cmLive, cmMerged),
		Result(t, "shop/svc.yaml", 1, svc, "", svcMerged),
		Result(t, "shop/secret.yaml", 2, sec, secLive, secMerged),
		Result(t, "shop/deploy.yaml", 1, dep, depLive, depLive),
		Result(t, "shop/tls.yaml", 1, bad, "", ""),
	}
	r[0].Warnings = []dryrun.Message{{Reason: reason.Conflict, Message: "apply conflicts with other field managers: .data.color owned by \"kubectl-edit\""}}
	r[4].Err = &dryrun.Message{Reason: reason.Invalid, Message: "the API server rejects this object: Secret \"tls\" is invalid: data[key]: Invalid value: \"@someone ```leak\": bad"}
	return report.Input{
		Ref:    "main",
		Commit: "0123456789abcdef0123456789abcdef01234567",
		Targets: []report.TargetInput{{
			Name:     "shop",
			Results:  r,
			Failures: []render.Failure{{Source: "shop/broken.yaml", Doc: 3, Reason: reason.Malformed, Message: "malformed YAML: yaml: line 2: mapping values are not allowed in this context"}},
		}, {
			Name: "billing", Skipped: "its source OCIRepository flux-system/billing is not this repository", NotPreviewed: true,
		}},
		Base: "base", BaseCommit: "89abcdef0123456789abcdef0123456789abcdef",
		Coverage: []report.CoverageInput{
			{Path: "shop/config.yaml", Readers: []string{"shop"}},
			{Path: "shop/tls.yaml", Readers: []string{"shop"}},
			{Path: "shop/svc.yaml", RenamedFrom: "shop/service.yaml", Readers: []string{"shop"}},
			{Path: "billing/app.yaml", Readers: []string{"billing"}},
			{Path: "overlays/extra/role.yaml", Deploys: true},
			{Path: "legacy/app.yaml", Removed: true, Gone: []string{"legacy"}},
			{Path: "docs/index.md"},
			{Path: "terraform/main.tf", Excluded: "drift.yaml's deploysNothing names it"},
		},
	}
}

// BudgetInput is SampleInput with n more ConfigMaps changed, each diff larger than
// the Secret's, so that a budget must choose (and without the coverage, which the
// budget always holds).
func BudgetInput(t testing.TB, n int) report.Input {
	in := SampleInput(t)
	in.Coverage = nil
	for i := 0; i < n; i++ {
		var data strings.Builder
		for k := 0; k < 8; k++ {
			fmt.Fprintf(&data, "k%d: v%d, ", k, i)
		}
		name := fmt.Sprintf("dash-%03d", i)
		live := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop}\ndata: {" + data.String() + "}\n"
		merged := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop}\ndata: {" + strings.ReplaceAll(data.String(), "v", "w") + "}\n"
		in.Targets[0].Results = append(in.Targets[0].Results, Result(t, "shop/dash.yaml", i+1, merged, live, merged))
	}
	return in
}

// Tree lists what is under root (root itself as "."), sorted: what --dump wrote.
func Tree(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	if err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
