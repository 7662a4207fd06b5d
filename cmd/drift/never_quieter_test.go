package main

import (
	"strings"
	"testing"
)

// TestAChangedTargetDriftCannotPreviewMakesTheReportIncomplete: a pull request bumps
// the revision of an Application whose source is another repository, and edits a
// suspended Flux Kustomization. drift cannot preview the first: the report says so
// in its title and at its top, and is incomplete (exit 2), never "no changes". The
// suspended Kustomization is Flux's own choice, and only listed.
func TestAChangedTargetDriftCannotPreviewMakesTheReportIncomplete(t *testing.T) {
	ns := namespace(t)
	ext := func(rev string) string {
		return sub(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: cert-manager, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/example/other.git, path: deploy, targetRevision: `+rev+`}
  destination: {server: https://kubernetes.default.svc, namespace: NS}
`, ns)
	}
	suspended := func(path string) string {
		return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: paused, namespace: flux-system}
spec:
  suspend: true
  interval: 10m
  path: ` + path + `
  sourceRef: {kind: GitRepository, name: flux-system}
`
	}
	r := fluxRepo(t, map[string]string{"apps/ext.yaml": ext("v1.0.0"), "flux/source.yaml": fluxSource, "flux/paused.yaml": suspended("./a")},
		map[string]string{"apps/ext.yaml": ext("v2.0.0"), "flux/paused.yaml": suspended("./b")})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "--base", "base"}
	rep, o := driftJSON(t, args...)
	if o.code != exitError || rep.Complete || rep.Summary.NotPreviewed != 1 {
		t.Fatalf("exit %d, complete %v, summary %+v: want 2, incomplete, 1 not previewed\n%s", o.code, rep.Complete, rep.Summary, o.stderr)
	}
	if tg := targetNamed(rep, "Application/cert-manager"); tg == nil || !tg.NotPreviewed || !strings.Contains(tg.Skipped, "not this repository") {
		t.Errorf("Application/cert-manager: %+v", tg)
	}
	if tg := targetNamed(rep, "Kustomization/flux-system/paused"); tg == nil || tg.NotPreviewed || !strings.Contains(tg.Skipped, "suspended") {
		t.Errorf("the suspended Kustomization: %+v", tg)
	}
	md := drift(t, append(args, "-o", "markdown")...).stdout
	first := strings.SplitN(md, "\n", 2)[0]
	if !strings.Contains(first, "1 changed target not previewed") || strings.Contains(first, "no changes") {
		t.Errorf("the title: %q", first)
	}
	if !strings.Contains(md, "[!CAUTION]") || !strings.Contains(md, "Application/cert-manager") {
		t.Errorf("the markdown does not say so at its top:\n%s", md)
	}
	text := drift(t, args...).stdout
	if !strings.Contains(text, "1 target the change touches was not previewed (Application/cert-manager") {
		t.Errorf("the text report:\n%s", text)
	}
}

// TestAPathThatMentionsArgoCDIsStillPreviewed: plain manifests carrying Argo CD's
// sync-wave and hook annotations (argocd-example-apps' sync-waves) are not
// Applications: --path previews them.
func TestAPathThatMentionsArgoCDIsStillPreviewed(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{
		"sync-waves/cm.yaml":  sub("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wave\n  namespace: NS\n  annotations: {argocd.argoproj.io/sync-wave: \"1\"}\n", ns),
		"sync-waves/job.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  namespace: NS\n  annotations: {argocd.argoproj.io/hook: PreSync}\n", ns),
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--path", "sync-waves")
	if o.code != exitChanges || rep.Summary.Add != 2 {
		t.Errorf("exit %d, summary %+v: want the two ConfigMaps added\n%s", o.code, rep.Summary, o.stderr)
	}
}
