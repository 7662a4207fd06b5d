package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

const (
	cmTmpl = `apiVersion: v1
kind: ConfigMap
metadata:
  name: NAME
  namespace: NS
data:
  color: COLOR
`
	// deployTmpl omits every field the server defaults.
	deployTmpl = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: IMAGE
`
	secretTmpl = `apiVersion: v1
kind: Secret
metadata:
  name: NAME
  namespace: NS
stringData:
  password: PASSWORD
`
	svcTmpl = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: NS
spec:
  selector: {app: web}
  ports:
  - port: PORT
`
)

func cm(ns, name, color string) string {
	return strings.NewReplacer("NS", ns, "NAME", name, "COLOR", color).Replace(cmTmpl)
}
func deploy(ns, image string) string {
	return strings.NewReplacer("NS", ns, "IMAGE", image).Replace(deployTmpl)
}
func secret(ns, name, pw string) string {
	return strings.NewReplacer("NS", ns, "NAME", name, "PASSWORD", pw).Replace(secretTmpl)
}
func svc(ns, port string) string { return strings.NewReplacer("NS", ns, "PORT", port).Replace(svcTmpl) }

func TestDiffCategoriesAndExitCodes(t *testing.T) {
	ns := namespace(t)
	base := map[string]string{
		"apps/same.yaml":    cm(ns, "same", "blue"),
		"apps/changed.yaml": cm(ns, "changed", "blue"),
		"apps/deploy.yaml":  deploy(ns, "nginx:1.25"),
	}
	for _, doc := range base {
		apply(t, "kubectl", doc)
	}
	r := repo(t, base)

	// The base, applied for real, is unchanged; the Deployment's server defaults do not
	// make it look modified.
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD")
	if o.code != 0 {
		t.Fatalf("exit %d for an applied base, want 0\n%s", o.code, o.stdout)
	}
	for k, c := range categories(rep) {
		if c != "unchanged" {
			t.Errorf("%s is %s, want unchanged", k, c)
		}
	}

	head, err := r.CommitFiles(map[string]string{
		"apps/changed.yaml": cm(ns, "changed", "green"),
		"apps/deploy.yaml":  deploy(ns, "nginx:1.27"),
		"apps/svc.yaml":     svc(ns, "80"),
	}, "head")
	if err != nil {
		t.Fatal(err)
	}
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 1 {
		t.Fatalf("exit %d, want 1 (changes)\n%s%s", o.code, o.stdout, o.stderr)
	}
	want := map[string]string{"ConfigMap/same": "unchanged", "ConfigMap/changed": "modify", "Deployment/web": "modify", "Service/web": "add"}
	if got := categories(rep); !equalMaps(got, want) {
		t.Fatalf("categories = %v, want %v", got, want)
	}
	if rep.Commit != head || rep.Ref != "main" || !rep.Complete || rep.SchemaVersion != "drift.report/v1" {
		t.Fatalf("report header = %+v", rep)
	}
	if rep.Summary.Add != 1 || rep.Summary.Modify != 2 || rep.Summary.Unchanged != 1 || rep.Summary.Error != 0 {
		t.Fatalf("summary = %+v", rep.Summary)
	}
	d := find(t, rep, "Deployment", "web")
	if !strings.Contains(d.Diff, "-      - image: nginx:1.25\n+      - image: nginx:1.27\n") || d.Source != "apps/deploy.yaml" {
		t.Fatalf("deployment diff:\n%s", d.Diff)
	}
	if strings.Contains(d.Diff, "managedFields") || strings.Contains(d.Diff, "resourceVersion") || strings.Contains(d.Diff, "generation:") {
		t.Fatalf("bookkeeping fields in the diff:\n%s", d.Diff)
	}
	add := find(t, rep, "Service", "web")
	if !strings.HasPrefix(add.Diff, "--- live/v1.Service."+ns+".web\n+++ merged/v1.Service."+ns+".web\n@@ -0,0 +1,") {
		t.Fatalf("add diff header:\n%s", add.Diff)
	}
	if strings.Contains(add.Diff, "uid:") || strings.Contains(add.Diff, "creationTimestamp") {
		t.Fatalf("server-generated fields in an add:\n%s", add.Diff)
	}
	if find(t, rep, "ConfigMap", "same").Diff != "" {
		t.Fatal("unchanged objects carry no diff")
	}
	// The earlier commit is still unchanged: refs are read from git objects.
	if _, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD~1"); o.code != 0 {
		t.Fatalf("HEAD~1 exit %d, want 0", o.code)
	}
	// The cluster was not touched by any of this.
	if _, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD"); o.code != 1 {
		t.Fatalf("second run exit %d, want 1", o.code)
	}
}

func TestDiffWorkTreeIncludesUncommittedEdits(t *testing.T) {
	ns := namespace(t)
	apply(t, "kubectl", cm(ns, "wt", "blue"))
	r := repo(t, map[string]string{"cm.yaml": cm(ns, "wt", "blue")})
	if err := r.Write(map[string]string{"cm.yaml": cm(ns, "wt", "red")}); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir)
	if o.code != 1 || categories(rep)["ConfigMap/wt"] != "modify" || rep.Commit != "" {
		t.Fatalf("work tree: exit %d, %v, commit %q", o.code, categories(rep), rep.Commit)
	}
	if _, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD"); o.code != 0 {
		t.Fatalf("HEAD exit %d, want 0", o.code)
	}
}

func TestDiffErrorsKeepTheOtherObjects(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{
		"a/good.yaml":    cm(ns, "good", "blue"),
		"a/broken.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: [oops\n",
		"a/port.yaml":    svc(ns, "99999"),
		"a/unknown.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: " + ns + "}\n",
		"a/scoped.yaml":  "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: drift-test-scoped, namespace: " + ns + "}\n",
		"a/nons.yaml":    cm("missing-namespace-xyz", "lost", "blue"),
		"a/typo.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo, namespace: " + ns + "}\ndta: {a: b}\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD")
	if o.code != 2 || rep.Complete {
		t.Fatalf("exit %d complete=%v, want 2 and incomplete", o.code, rep.Complete)
	}
	if categories(rep)["ConfigMap/good"] != "add" {
		t.Fatalf("the good object is lost: %v", categories(rep))
	}
	if rep.Summary.Error != 6 || rep.Summary.Add != 1 {
		t.Fatalf("summary = %+v", rep.Summary)
	}
	want := map[string]string{
		"Service/web":                   "Invalid value: 99999",
		"Widget/w":                      "the cluster does not serve kind Widget in example.com/v1",
		"ClusterRole/drift-test-scoped": "ClusterRole is cluster-scoped but sets metadata.namespace",
		"ConfigMap/lost":                "namespace missing-namespace-xyz does not exist in the cluster and this change does not create it",
	}
	for k, msg := range want {
		parts := strings.SplitN(k, "/", 2)
		obj := find(t, rep, parts[0], parts[1])
		if obj.Category != "error" || !strings.Contains(obj.Error, msg) || obj.ErrorReason == "" {
			t.Errorf("%s: category %s, reason %q, error %q; want an error containing %q", k, obj.Category, obj.ErrorReason, obj.Error, msg)
		}
	}
	var broken bool
	for _, obj := range rep.Targets[0].Objects {
		if obj.Source == "a/broken.yaml" && obj.Document == 1 && obj.Category == "error" && strings.Contains(obj.Error, "malformed YAML") {
			broken = true
		}
	}
	if !broken {
		t.Fatalf("the malformed document is not reported with its file and document")
	}
	text := drift(t, "diff", "--repo", r.Dir, "--ref", "HEAD")
	if text.code != 2 || !strings.Contains(text.stdout, "The report is incomplete: 6 objects could not be previewed") {
		t.Fatalf("text report does not say it is incomplete (exit %d):\n%s", text.code, text.stdout)
	}
}

func TestDiffNeverShowsSecretValues(t *testing.T) {
	ns := namespace(t)
	lastApplied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"rotated"},"stringData":{"password":"old-password-1"}}`
	apply(t, "kubectl", secret(ns, "rotated", "old-password-1"))
	apply(t, "kubectl", secret(ns, "kept", "kept-password-2"))
	apply(t, "annotator", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: rotated\n  namespace: "+ns+"\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '"+lastApplied+"'\n")
	r := repo(t, map[string]string{
		"s.yaml":   secret(ns, "rotated", "new-password-3"),
		"k.yaml":   secret(ns, "kept", "kept-password-2"),
		"new.yaml": secret(ns, "brand-new", "fresh-password-4"),
	})
	values := []string{"old-password-1", "kept-password-2", "new-password-3", "fresh-password-4"}
	for _, format := range []string{"text", "markdown", "json"} {
		o := drift(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "-o", format, "--show-unchanged")
		if o.code != 1 {
			t.Fatalf("%s: exit %d\n%s%s", format, o.code, o.stdout, o.stderr)
		}
		for _, v := range values {
			for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
				if strings.Contains(o.stdout+o.stderr, form) {
					t.Errorf("%s output shows the secret value %q", format, form)
				}
			}
		}
		if strings.Contains(o.stdout, "last-applied-configuration") {
			t.Errorf("%s output shows the last-applied annotation of a Secret", format)
		}
	}
	rep, _ := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD")
	rot := find(t, rep, "Secret", "rotated")
	if rot.Category != "modify" || !strings.Contains(rot.Diff, "-  password: '*** (before)'\n+  password: '*** (after)'") {
		t.Fatalf("rotated secret: %s\n%s", rot.Category, rot.Diff)
	}
	if kept := find(t, rep, "Secret", "kept"); kept.Category != "unchanged" {
		t.Fatalf("kept secret is %s, want unchanged", kept.Category)
	}
	if nw := find(t, rep, "Secret", "brand-new"); nw.Category != "add" || !strings.Contains(nw.Diff, "+  password: '***'") {
		t.Fatalf("new secret: %s\n%s", nw.Category, nw.Diff)
	}
	shown := drift(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "-o", "json", "--show-secrets")
	if !strings.Contains(shown.stdout, base64.StdEncoding.EncodeToString([]byte("new-password-3"))) {
		t.Fatal("--show-secrets should show the new value")
	}
}

func TestDiffConflictWithAnotherFieldManager(t *testing.T) {
	ns := namespace(t)
	apply(t, "kubectl", cm(ns, "shared", "blue"))
	// Someone else took .data.color over, e.g. a controller (a manager no applier
	// profile knows, so no applier-mismatch).
	apply(t, "colour-controller", cm(ns, "shared", "purple"))
	r := repo(t, map[string]string{"cm.yaml": cm(ns, "shared", "green")})

	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD")
	if o.code != 1 {
		t.Fatalf("exit %d", o.code)
	}
	obj := find(t, rep, "ConfigMap", "shared")
	if obj.Category != "modify" || !strings.Contains(obj.Diff, "-  color: purple\n+  color: green") {
		t.Fatalf("want the forced result purple -> green, got %s:\n%s", obj.Category, obj.Diff)
	}
	if len(obj.Warnings) != 1 || obj.Warnings[0].Reason != "conflict" || !strings.Contains(obj.Warnings[0].Message, `.data.color owned by "colour-controller"`) {
		t.Fatalf("want a conflict warning naming colour-controller and .data.color, got %+v", obj.Warnings)
	}
	rep, _ = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "--force-conflicts")
	if w := find(t, rep, "ConfigMap", "shared").Warnings; len(w) != 0 {
		t.Fatalf("--force-conflicts should not warn: %+v", w)
	}
	// Applying as the owner of the field, there is no conflict.
	rep, _ = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "--field-manager", "colour-controller")
	if w := find(t, rep, "ConfigMap", "shared").Warnings; len(w) != 0 {
		t.Fatalf("the owning manager should not conflict: %+v", w)
	}
}

func TestDiffDefaultsNamespaces(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nons}\n"})
	rep, _ := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "-n", ns)
	if obj := find(t, rep, "ConfigMap", "nons"); obj.Namespace != ns || obj.Category != "add" {
		t.Fatalf("-n: namespace %q category %s", obj.Namespace, obj.Category)
	}
	rep, _ = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD")
	if obj := find(t, rep, "ConfigMap", "nons"); obj.Namespace != "default" {
		t.Fatalf("without -n the kubeconfig context's namespace (default) applies, got %q", obj.Namespace)
	}
}

// TestDiffRunDeadlineEndsTheRunAndSaysWhere: a deadline that passes before anything
// is checked ends the run with a report of the targets planned, each not-checked,
// incomplete, never a report of no changes; and on an ephemeral server, a deadline
// that passes while the server starts reports its target the same way, in every
// output asked for. Objects the deadline cuts off mid-run are not-checked
// (internal/dryrun).
func TestDiffRunDeadlineEndsTheRunAndSaysWhere(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{"a.yaml": cm(ns, "a", "x"), "b.yaml": cm(ns, "b", "y")})
	notChecked := func(name string, rep *report.Report, o outcome, when string) {
		t.Helper()
		if o.code != 2 || rep.Complete || len(rep.Targets) != 1 || len(rep.Targets[0].Objects) != 1 {
			t.Fatalf("%s: exit %d, %+v\n%s", name, o.code, rep, o.stderr)
		}
		obj := rep.Targets[0].Objects[0]
		if obj.ErrorReason != reason.NotChecked || !strings.Contains(obj.Error, "not previewed: the run ended "+when) || !strings.Contains(obj.Error, "raise --timeout") {
			t.Errorf("%s: %+v", name, obj)
		}
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "--timeout", "1ns")
	notChecked("--timeout 1ns", rep, o, "while its targets were discovered and planned (timed out after 1ns")
	if !strings.Contains(o.stderr, "timed out after 1ns") {
		t.Errorf("stderr does not say the run timed out:\n%s", o.stderr)
	}

	// An ephemeral server takes seconds to start.
	md := filepath.Join(t.TempDir(), "comment.md")
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "--cluster", "ephemeral", "--timeout", "1s", "--comment-file", md)
	notChecked("ephemeral --timeout 1s", rep, o, "")
	if data, err := os.ReadFile(md); err != nil || !strings.Contains(string(data), "not-checked") {
		t.Errorf("--comment-file: %v\n%s", err, data)
	}
}

func TestDiffInputErrors(t *testing.T) {
	r := repo(t, map[string]string{"cm.yaml": cm("default", "x", "y")})
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"not a repo":   {[]string{"--repo", t.TempDir()}, "is not in a git repository"},
		"unknown ref":  {[]string{"--repo", r.Dir, "--ref", "mian"}, `unknown ref "mian"`},
		"missing path": {[]string{"--repo", r.Dir, "--ref", "HEAD", "--path", "nope"}, "path nope is not in commit"},
		"bad format":   {[]string{"--repo", r.Dir, "-o", "yaml"}, `unknown output format "yaml"`},
	} {
		t.Run(name, func(t *testing.T) {
			o := drift(t, append([]string{"diff"}, c.args...)...)
			if o.code != 2 || !strings.Contains(o.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", o.code, o.stderr, c.want)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDiffWithoutAReachableCluster(t *testing.T) {
	r := repo(t, map[string]string{"cm.yaml": cm("default", "x", "y")})
	dead := t.TempDir() + "/kubeconfig"
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: \"super-secret-token-value\"}\ncurrent-context: c\n"
	if err := os.WriteFile(dead, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", t.TempDir()+"/missing")
	t.Setenv("HOME", t.TempDir())
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"nothing configured": {nil, "no cluster configured"},
		"unreachable":        {[]string{"--kubeconfig", dead}, "cannot reach the API server at https://127.0.0.1:1"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, append([]string{"diff", "--repo", r.Dir}, c.args...))
			if code != 2 || !strings.Contains(errOut.String(), c.want) || out.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one error %q", code, out.String(), errOut.String(), c.want)
			}
			if strings.Contains(errOut.String(), "super-secret-token-value") {
				t.Fatal("the token reached the output")
			}
		})
	}
}

// TestDiscoveryWithoutACluster: a Flux Kustomization whose GitRepository the
// repository does not hold is read from the cluster; with no kubeconfig and no
// --cluster, the error says no cluster is configured and names --cluster ephemeral,
// never client-go's fallback to localhost:8080.
func TestDiscoveryWithoutACluster(t *testing.T) {
	r := repo(t, map[string]string{
		"clusters/prod/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"apps/cm.yaml": cm("default", "x", "y"),
	})
	t.Setenv("KUBECONFIG", t.TempDir()+"/missing")
	t.Setenv("HOME", t.TempDir())
	o := runDrift("diff", "--repo", r.Dir, "--ref", "HEAD", "-o", "json")
	all := o.stdout + o.stderr
	if o.code != 2 || !strings.Contains(all, "no cluster configured") || !strings.Contains(all, "--cluster ephemeral") || strings.Contains(all, "localhost:8080") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
	}
}
