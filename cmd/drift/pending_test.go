package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

func hasWarning(o report.Object, why reason.Reason, text string) bool {
	for _, w := range o.Warnings {
		if w.Reason == why && strings.Contains(w.Message, text) {
			return true
		}
	}
	return false
}

func TestNamespaceCreatedBySameChange(t *testing.T) {
	fresh := fmt.Sprintf("new-ns-%d", nsCounter.Add(1))
	missing := fmt.Sprintf("missing-ns-%d", nsCounter.Add(1))
	r := repo(t, map[string]string{
		"ns.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + fresh + "}\n",
		"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: " + fresh + "}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: api, image: api:1}]}\n",
		"orphan.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: orphan, namespace: " + missing + "}\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 2 || rep.Complete {
		t.Fatalf("exit %d, complete %v; want 2 (the orphan)\n%s", o.code, rep.Complete, o.stderr)
	}
	if ns := find(t, rep, "Namespace", fresh); ns.Category != report.Add || len(ns.Warnings) != 0 {
		t.Errorf("namespace: %s %v", ns.Category, ns.Warnings)
	}
	dep := find(t, rep, "Deployment", "api")
	if dep.Category != report.Add || !hasWarning(dep, "namespace-pending", "namespace "+fresh+" is created by this change") ||
		!strings.Contains(dep.Diff, "+  namespace: "+fresh) || !strings.Contains(dep.Diff, "+      - image: api:1") {
		t.Errorf("deployment: %s %v\n%s", dep.Category, dep.Warnings, dep.Diff)
	}
	orphan := find(t, rep, "ConfigMap", "orphan")
	if orphan.Category != report.Error || orphan.ErrorReason != "not-found" ||
		!strings.Contains(orphan.Error, "namespace "+missing+" does not exist in the cluster and this change does not create it") {
		t.Errorf("orphan: %s %s %q", orphan.Category, orphan.ErrorReason, orphan.Error)
	}
}

func TestCRDCreatedBySameChange(t *testing.T) {
	ns := namespace(t)
	group := fmt.Sprintf("g%d.example.com", nsCounter.Add(1))
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.GROUP}
spec:
  group: GROUP
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
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
`
	r := repo(t, map[string]string{
		"crd.yaml":  strings.ReplaceAll(crd, "GROUP", group),
		"good.yaml": "apiVersion: " + group + "/v1\nkind: Gadget\nmetadata: {name: good}\nspec: {size: 3}\n",
		"bad.yaml":  "apiVersion: " + group + "/v1\nkind: Gadget\nmetadata: {name: bad}\nspec: {size: 0, colour: red}\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "-n", ns)
	if o.code != 2 {
		t.Fatalf("exit %d; want 2 (the bad gadget)\n%s", o.code, o.stderr)
	}
	if c := find(t, rep, "CustomResourceDefinition", "gadgets."+group); c.Category != report.Add {
		t.Errorf("crd: %s %s", c.Category, c.Error)
	}
	good := find(t, rep, "Gadget", "good")
	if good.Category != report.Add || good.Namespace != ns || !hasWarning(good, "crd-pending", "its CustomResourceDefinition is created by this change (crd.yaml") ||
		!strings.Contains(good.Diff, "+  size: 3") {
		t.Errorf("good: %s ns %q %v\n%s", good.Category, good.Namespace, good.Warnings, good.Diff)
	}
	bad := find(t, rep, "Gadget", "bad")
	if bad.Category != report.Error || bad.ErrorReason != "invalid" || !strings.Contains(bad.Error, `unknown field "spec.colour"`) ||
		!strings.Contains(bad.Error, "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1") {
		t.Errorf("bad: %s %s %q", bad.Category, bad.ErrorReason, bad.Error)
	}
}

func TestImmutableFieldIsAnErrorNeverNoChanges(t *testing.T) {
	ns := namespace(t)
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: NS}\nspec:\n  selector: {matchLabels: {app: LABEL}}\n  template:\n    metadata: {labels: {app: LABEL}}\n    spec: {containers: [{name: web, image: web:1}]}\n"
	apply(t, "kubectl", strings.ReplaceAll(sub(deploy, ns), "LABEL", "web"))
	r := repo(t, map[string]string{"web.yaml": strings.ReplaceAll(sub(deploy, ns), "LABEL", "web-v2")})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 2 || rep.Complete {
		t.Fatalf("exit %d complete %v\n%s", o.code, rep.Complete, o.stderr)
	}
	web := find(t, rep, "Deployment", "web")
	if web.Category != report.Error || web.ErrorReason != "immutable" || !strings.Contains(web.Error, "spec.selector cannot change on an existing object") ||
		!strings.Contains(web.Error, "must be replaced") {
		t.Errorf("web: %s %s %q", web.Category, web.ErrorReason, web.Error)
	}
}

func TestGenerateNameIsAnAdditionEveryRun(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{
		"job.yaml": sub("apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-, namespace: NS}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: migrate:1}]\n", ns),
	})
	first := ""
	for run := 1; run <= 2; run++ {
		rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
		job := find(t, rep, "Job", "migrate-")
		// The same change gives the same report: no generated name or uid labels.
		if run == 1 {
			first = job.Diff
		} else if job.Diff != first {
			t.Errorf("the report differs between runs:\n%s\n---\n%s", first, job.Diff)
		}
		if o.code != 1 || job.Category != report.Add || !hasWarning(job, "generate-name", `has only metadata.generateName ("migrate-")`) ||
			!strings.Contains(job.Diff, "+  generateName: migrate-") || !strings.Contains(job.Diff, "+  backoffLimit: 6") {
			t.Fatalf("run %d: exit %d, %s %v\n%s", run, o.code, job.Category, job.Warnings, job.Diff)
		}
	}
}
