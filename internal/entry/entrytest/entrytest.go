// Package entrytest makes the report inputs the tests of the packages that build,
// scrub, merge and write reports build from, so that they test the same synthetic
// run.
package entrytest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/scrub"
)

// SampleInput has one object of every category, a warning, a Secret and a render
// failure.
func SampleInput(t testing.TB) entry.Input {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {color: green}\n"
	cmLive := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop, uid: u1, resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: kubectl}]}\ndata: {color: blue, size: '3'}\n"
	cmMerged := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop, uid: u1, resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: kubectl}]}\ndata: {color: green, size: '3'}\n"
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n"
	svcMerged := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop, uid: new, resourceVersion: '1', creationTimestamp: '2026-01-02T00:00:00Z'}\nspec: {clusterIP: 10.0.0.0, clusterIPs: [10.0.0.0], ports: [{port: 80, protocol: TCP, targetPort: 80}], type: ClusterIP}\n"
	sec := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData: {password: s3cr3t-new, user: admin}\n"
	secLive := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"s3cr3t-old\"}}'}}\ndata: {password: " + reporttest.B64("s3cr3t-old") + ", user: " + reporttest.B64("admin") + "}\n"
	secMerged := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"s3cr3t-old\"}}'}}\ndata: {password: " + reporttest.B64("s3cr3t-new") + ", user: " + reporttest.B64("admin") + "}\n"
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 2}\n"
	depLive := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, generation: 3}\nspec: {replicas: 2}\n"
	bad := "apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: shop}\nstringData: {key: '@someone ```leak'}\n"

	r := []dryrun.Result{
		reporttest.Result(t, "shop/config.yaml", 1, cm, cmLive, cmMerged),
		reporttest.Result(t, "shop/svc.yaml", 1, svc, "", svcMerged),
		reporttest.Result(t, "shop/secret.yaml", 2, sec, secLive, secMerged),
		reporttest.Result(t, "shop/deploy.yaml", 1, dep, depLive, depLive),
		reporttest.Result(t, "shop/tls.yaml", 1, bad, "", ""),
	}
	r[0].Warnings = []dryrun.Message{{Reason: reason.Conflict, Message: "apply conflicts with other field managers: .data.color owned by \"kubectl-edit\""}}
	r[4].Err = &dryrun.Message{Reason: reason.Invalid, Message: "the API server rejects this object: Secret \"tls\" is invalid: data[key]: Invalid value: \"@someone ```leak\": bad"}
	return entry.Input{
		Ref:    "main",
		Commit: "0123456789abcdef0123456789abcdef01234567",
		Targets: []entry.TargetInput{{
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
func BudgetInput(t testing.TB, n int) entry.Input {
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
		in.Targets[0].Results = append(in.Targets[0].Results, reporttest.Result(t, "shop/dash.yaml", i+1, merged, live, merged))
	}
	return in
}

// Build builds in's report as a run that streams nothing: one builder over a new
// scrubber.
func Build(t testing.TB, in entry.Input, opts entry.Options) *report.Report {
	t.Helper()
	rep, err := entry.Build(in, entry.NewBuilder(opts, scrub.New()))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
