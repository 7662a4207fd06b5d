package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// TestOperatorFilledSecretsArePreviewedAsTheOperatorFillsThem: a ResourceSet's
// Secret of type dockerconfigjson with flux-operator's copyFrom annotation is
// written without data; the operator copies it from another Secret before applying.
// With the source in the cluster, the preview fills it as the operator does (no
// error; its value masked, never shown); without it, and on an ephemeral server, it
// is named as filled by the operator, never an error.
func TestOperatorFilledSecretsArePreviewedAsTheOperatorFillsThem(t *testing.T) {
	ns := namespace(t)
	apply(t, "kubectl", "apiVersion: v1\nkind: Secret\nmetadata: {name: regcred-src, namespace: "+ns+"}\ntype: kubernetes.io/dockerconfigjson\n"+
		"stringData: {.dockerconfigjson: '{\"auths\": {\"r.example\": {\"auth\": \"cmVnLXMzY3IzdA==\"}}}'}\n")
	rs := func(source string) string {
		return "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata: {name: regcreds, namespace: " + ns + "}\nspec:\n  inputs:\n    - tenant: one\n  resources:\n" +
			"    - apiVersion: v1\n      kind: Secret\n      metadata:\n        name: << inputs.tenant >>-regcred\n        namespace: " + ns + "\n" +
			"        annotations: {fluxcd.controlplane.io/copyFrom: " + ns + "/" + source + "}\n      type: kubernetes.io/dockerconfigjson\n"
	}
	secretOf := func(rep *report.Report) *report.Object {
		if tg := targetNamed(rep, "ResourceSet/"+ns+"/regcreds"); tg != nil && len(tg.Objects) == 1 {
			return &tg.Objects[0]
		}
		return nil
	}
	filled := func(o *report.Object) string {
		for _, w := range o.Warnings {
			if w.Reason == "operator-filled" {
				return w.Message
			}
		}
		return ""
	}
	dir, _ := actionsCheckout(t, map[string]string{"rs.yaml": rs("regcred-src")}, map[string]string{"README.md": "# x\n"})
	rep, o := driftJSON(t, "diff", "--repo", dir, "--ref", "HEAD", "--target", "ResourceSet/*/*")
	s := secretOf(rep)
	if o.code != exitChanges || !rep.Complete || s == nil || s.Category != report.Add || !strings.Contains(filled(s), "filled from the cluster as it fills it") ||
		!strings.Contains(s.Diff, ".dockerconfigjson: '***'") || strings.Contains(o.stdout, "cmVnLXMzY3IzdA") {
		t.Errorf("filled from the cluster: exit %d, %+v\n%s", o.code, s, o.stderr)
	}

	// On a pull request the Secret it names is the pull request's choice: not read,
	// unless the runner says so.
	changed := strings.Replace(rs("regcred-src"), "tenant: one", "tenant: one\n      extra: x", 1)
	prDir, prBase := actionsCheckout(t, map[string]string{"rs.yaml": rs("regcred-src")}, map[string]string{"rs.yaml": changed})
	rep, o = driftJSON(t, "diff", "--repo", prDir, "--ref", "HEAD", "--base", prBase, "--target", "ResourceSet/*/*")
	if s := secretOf(rep); o.code == exitError || s == nil || !strings.Contains(filled(s), "is not read on a pull request") {
		t.Errorf("a pull request: exit %d, %+v\n%s", o.code, s, o.stderr)
	}
	rep, o = driftJSON(t, "diff", "--repo", prDir, "--ref", "HEAD", "--base", prBase, "--lookup-secrets", "--target", "ResourceSet/*/*")
	if s := secretOf(rep); o.code == exitError || s == nil || !strings.Contains(filled(s), "filled from the cluster as it fills it") || strings.Contains(o.stdout, "cmVnLXMzY3IzdA") {
		t.Errorf("a pull request, --lookup-secrets: exit %d, %+v\n%s", o.code, s, o.stderr)
	}

	dir, _ = actionsCheckout(t, map[string]string{"rs.yaml": rs("missing")}, map[string]string{"README.md": "# x\n"})
	rep, o = driftJSON(t, "diff", "--repo", dir, "--ref", "HEAD", "--target", "ResourceSet/*/*")
	if s := secretOf(rep); o.code != exitChanges || !rep.Complete || s == nil || s.Category != report.Add || !strings.Contains(filled(s), "cannot be read") {
		t.Errorf("a source the cluster lacks: exit %d, %+v\n%s", o.code, s, o.stderr)
	}

	rep, o = driftJSON(t, "diff", "--repo", prDir, "--ref", "HEAD", "--base", prBase, "--cluster", "ephemeral", "--target", "ResourceSet/*/*")
	if s := secretOf(rep); o.code == exitError || !rep.Complete || s == nil || s.Category != report.Unchanged || filled(s) == "" {
		t.Errorf("on an ephemeral server: exit %d, %+v\n%s", o.code, s, o.stderr)
	}
}

// TestSecretsAnotherControllerFillsShowNoChange: a repository writes an empty Secret
// that kubernetes-replicator fills after it is applied (replicate-from), as its own
// field manager. Applied by Flux (server-side) or by drift's default applier, the
// empty Secret does not take the data away, so drift shows no change, and no value.
func TestSecretsAnotherControllerFillsShowNoChange(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	empty := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: " + ns + "\n  annotations: {replicator.v1.mittwald.de/replicate-from: default/source}\n%s"
	fill := func(name string) {
		apply(t, "kubernetes-replicator", "apiVersion: v1\nkind: Secret\nmetadata: {name: "+name+", namespace: "+ns+"}\ndata: {token: cjNwbDFjNHRlZC12YWx1ZQ==}\n")
	}
	apply(t, "kustomize-controller", fmt.Sprintf(empty, "by-flux", "  labels: {kustomize.toolkit.fluxcd.io/name: replicated, kustomize.toolkit.fluxcd.io/namespace: flux-system}\n"))
	fill("by-flux")
	apply(t, "kubectl", fmt.Sprintf(empty, "by-drift", ""))
	fill("by-drift")
	r := fluxRepo(t, map[string]string{
		"flux/source.yaml": fluxSource,
		"flux/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: replicated, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"apps/secret.yaml":  fmt.Sprintf(empty, "by-flux", ""),
		"plain/secret.yaml": fmt.Sprintf(empty, "by-drift", ""),
		"drift.yaml":        "discover: true\nrepoURLs: [\"" + fluxRemote + "\"]\ntargets: [{name: plain, path: plain}]\n",
	}, map[string]string{"README.md": "# x\n"})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	for _, name := range []string{"by-flux", "by-drift"} {
		if s := find(t, rep, "Secret", name); s.Category != report.Unchanged {
			t.Errorf("%s: %s\n%s\n%s", name, s.Category, s.Diff, o.stderr)
		}
	}
	if strings.Contains(o.stdout+o.stderr, "r3pl1c4ted-value") {
		t.Error("the output shows the replicated value")
	}
}
