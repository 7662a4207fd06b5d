package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

const crdTmpl = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
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
              size: {type: integer, maximum: 10}
`

func TestEphemeralCRDAddedInHeadAndServerOnlyErrors(t *testing.T) {
	r := repo(t, map[string]string{"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{
		"crd.yaml":     crdTmpl,
		"widgets.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: small, namespace: shop}\nspec: {size: 3}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: huge, namespace: shop}\nspec: {size: 99}\n",
		"svc.yaml":     "apiVersion: v1\nkind: Service\nmetadata: {name: bad, namespace: shop}\nspec: {ports: [{port: 70000}]}\n",
	}, "head"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if o.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
	}
	want := map[string]string{
		"Namespace/shop": "unchanged", "CustomResourceDefinition/widgets.example.com": "add",
		"Widget/small": "add", "Widget/huge": "error", "Service/bad": "error",
	}
	if got := categories(rep); !equalMaps(got, want) {
		t.Fatalf("categories = %v\nwant %v", got, want)
	}
	if e := find(t, rep, "Widget", "huge").Error; !strings.Contains(e, "spec.size") {
		t.Fatalf("the CRD's schema should reject size 99: %q", e)
	}
	if e := find(t, rep, "Service", "bad").Error; !strings.Contains(e, "70000") {
		t.Fatalf("the server should reject port 70000: %q", e)
	}
}

// startDrift runs the test binary as drift, with its own TMPDIR.
func startDrift(t *testing.T, tmp string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DRIFT_TEST_RUN_MAIN=1", "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// processesUsing lists processes whose command line mentions dir.
func processesUsing(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(data), dir) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(data), "\x00", " ")[:min(80, len(data))])
		}
	}
	return out
}

func assertCleanedUp(t *testing.T, tmp string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, _ := os.ReadDir(tmp)
		procs := processesUsing(tmp)
		if len(left) == 0 && len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			t.Fatalf("left behind: files %v, processes %v", names, procs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestEphemeralCleansUpAfterSuccessErrorAndSIGTERM(t *testing.T) {
	dir := demoRepo(t)
	bad := repo(t, map[string]string{"svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 70000}]}\n"})
	for _, c := range []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"normal run", []string{"diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main"}, 1},
		{"run with errors", []string{"diff", "--repo", bad.Dir, "--cluster", "ephemeral", "--ref", "HEAD"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := startDrift(t, tmp, c.args...)
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != c.wantCode {
				t.Fatalf("exit %d (%v), want %d", code, err, c.wantCode)
			}
			assertCleanedUp(t, tmp)
		})
	}
	t.Run("SIGTERM", func(t *testing.T) {
		tmp := t.TempDir()
		cmd := startDrift(t, tmp, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(strings.Join(processesUsing(tmp), "\n"), "kube-apiserver") {
			if time.Now().After(deadline) {
				t.Fatal("the ephemeral kube-apiserver never started")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 2 && code != 1 {
			t.Fatalf("exit %d after SIGTERM", code)
		}
		assertCleanedUp(t, tmp)
	})
}

// A target's namespace that the repository does not render is created in the
// ephemeral server, as the cluster has it (else nothing could be deployed there),
// and the target says so; a head that then renders that Namespace adds it.
func TestEphemeralCreatesTheNamespaceATargetDeploysInto(t *testing.T) {
	cm := func(name, color string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {color: " + color + "}\n"
	}
	r := repo(t, map[string]string{
		"drift.yaml":  "targets:\n- {name: mon, path: mon, namespace: monitoring, applier: argocd}\n- {name: log, path: log, namespace: logging}\n",
		"mon/cm.yaml": cm("x", "blue"),
		"log/cm.yaml": cm("logs", "blue"),
	})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"mon/cm.yaml": cm("x", "green"), "log/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: logging}\n"}, "head"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if o.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", o.code, o.stderr)
	}
	want := map[string]string{"ConfigMap/x": "modify", "ConfigMap/logs": "unchanged", "Namespace/logging": "add"}
	if got := categories(rep); !equalMaps(got, want) {
		t.Fatalf("categories = %v\nwant %v", got, want)
	}
	for _, tg := range rep.Targets {
		if tg.Name == "mon" && !strings.Contains(strings.Join(tg.Notes, "\n"), "namespace monitoring is created in the ephemeral server") {
			t.Errorf("target mon: notes %q", tg.Notes)
		}
	}
	// The base is loaded as Argo CD's client-side sync left it (created, as
	// argocd-controller): not taken for a server-side applier's.
	if x := find(t, rep, "ConfigMap", "x"); len(x.Warnings) != 0 {
		t.Errorf("ConfigMap x: warnings %+v", x.Warnings)
	}
}

// The namespace a Flux Kustomization that applies a target is in exists wherever
// kustomize-controller reads it: a home lab whose flux-system namespace Flux's
// bootstrap made (no file of the repository renders it) previews a change to one
// app's Kustomization, which the cluster-apps Kustomization renders into
// flux-system, as that one change, not as every object of cluster-apps refused for
// want of the namespace.
func TestEphemeralCreatesTheNamespaceOfWhatAppliesATarget(t *testing.T) {
	ks := func(name, path, extra string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec: {path: " + path + ", prune: true, sourceRef: {kind: GitRepository, name: flux-system}" + extra + "}\n"
	}
	r := repo(t, map[string]string{
		"clusters/main/flux-system/gotk-sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n" +
			"spec: {interval: 1m, url: 'https://git.example/fleet', ref: {branch: main}}\n---\n" + ks("flux-system", "./clusters/main", ", interval: 10m"),
		"clusters/main/apps.yaml": ks("cluster-apps", "./apps", ", interval: 10m"),
		"apps/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [app-a/ks.yaml, app-b/ks.yaml]\n",
		"apps/app-a/ks.yaml":      ks("app-a", "./apps/app-a/app", ", interval: 1h, targetNamespace: web"),
		"apps/app-a/app/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {color: blue}\n",
		"apps/app-b/ks.yaml":      ks("app-b", "./apps/app-b/app", ", interval: 1h, targetNamespace: web"),
		"apps/app-b/app/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {color: blue}\n",
	})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"apps/app-a/ks.yaml": ks("app-a", "./apps/app-a/app", ", interval: 2h, targetNamespace: web")}, "head"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if o.code != 1 || !rep.Complete {
		t.Fatalf("exit %d, complete %v, want 1 and complete\n%s", o.code, rep.Complete, o.stderr)
	}
	want := map[string]string{"Kustomization/app-a": "modify", "Kustomization/app-b": "unchanged"}
	if got := categories(rep); !equalMaps(got, want) {
		t.Fatalf("categories = %v\nwant %v", got, want)
	}
	apps := targetNamed(rep, "Kustomization/flux-system/cluster-apps")
	if apps == nil || !strings.Contains(strings.Join(apps.Notes, "\n"), "namespace flux-system is created in the ephemeral server: the Kustomization that applies the target is there") {
		t.Errorf("cluster-apps does not say it took flux-system to be there: %+v", apps)
	}
}

// Custom resources of a CRD the repository does not hold are checked on an ephemeral
// server given the CRD, from drift.yaml's ephemeral.crds or a live cluster's
// (--crds-from-context); without it they are unknown kinds.
func TestEphemeralServersGetTheCRDsTheClustersHave(t *testing.T) {
	crd := strings.NewReplacer("widgets", "gadgets", "Widget", "Gadget", "widget", "gadget").Replace(crdTmpl)
	apply(t, "kubectl", crd)
	kc, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	gadget := "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\nspec: {size: 3}\n"
	r := repo(t, map[string]string{"apps/gadget.yaml": gadget, "crds/gadget.yaml": crd, "drift.yaml": "targets: [{name: apps, path: apps}]\n"})
	args := []string{"diff", "--repo", r.Dir, "--cluster", "ephemeral", "--ref", "main"}
	rep, o := driftJSON(t, args...)
	if o.code != 2 || find(t, rep, "Gadget", "g").ErrorReason != "unknown-kind" {
		t.Fatalf("without the CRD: exit %d, %+v\n%s", o.code, find(t, rep, "Gadget", "g"), o.stderr)
	}
	rep, o = driftJSON(t, append(args, "--crds-from-context", kc.CurrentContext)...)
	if o.code != 1 || find(t, rep, "Gadget", "g").Category != "add" {
		t.Fatalf("--crds-from-context: exit %d, %+v\n%s", o.code, find(t, rep, "Gadget", "g"), o.stderr)
	}
	if _, err := r.CommitFiles(map[string]string{"drift.yaml": "targets: [{name: apps, path: apps}]\nephemeral: {crds: [crds]}\n"}, "crds"); err != nil {
		t.Fatal(err)
	}
	rep, o = driftJSON(t, args...)
	if o.code != 1 || find(t, rep, "Gadget", "g").Category != "add" || len(rep.Targets) != 1 {
		t.Fatalf("ephemeral.crds: exit %d, %+v\n%s", o.code, rep.Targets, o.stderr)
	}
	if o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--crds-from-context", kc.CurrentContext); o.code != 2 || !strings.Contains(o.stderr, "use it with --cluster ephemeral") {
		t.Errorf("--crds-from-context on a live cluster: exit %d\n%s", o.code, o.stderr)
	}
}

// TestEphemeralSaysWhenTheBaseCouldNotBeLoaded: a pull request that fixes an object
// the API server refuses in the base (a Service whose port is out of range) is
// previewed against a server without the base's version: the object says so in the
// report, beside its addition; the object beside it, loaded, is a modification.
func TestEphemeralSaysWhenTheBaseCouldNotBeLoaded(t *testing.T) {
	svc := func(port int) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {app: web}\n  ports: [{port: %d}]\n", port)
	}
	r, baseSHA, headSHA := stateRepo(t,
		map[string]string{"app/svc.yaml": svc(70000), "app/cm.yaml": cmApp("blue")},
		map[string]string{"app/svc.yaml": svc(80), "app/cm.yaml": cmApp("green")})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--path", "app", "--cluster", "ephemeral", "--base", baseSHA, "--ref", headSHA)
	if o.code != exitChanges {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	web := find(t, rep, "Service", "web")
	if web.Category != "add" || !slices.ContainsFunc(web.Warnings, func(w report.Message) bool {
		return w.Reason == reason.BaseNotLoaded && strings.Contains(w.Message, "70000")
	}) {
		t.Errorf("the Service the base could not load: %s, warnings %+v", web.Category, web.Warnings)
	}
	if cm := find(t, rep, "ConfigMap", "app"); cm.Category != "modify" || len(cm.Warnings) != 0 {
		t.Errorf("the ConfigMap beside it: %s %+v", cm.Category, cm.Warnings)
	}
}

// A throwaway server holds the Services that name their own node port or cluster IP,
// even where the change leaves them as they are: a Service the change adds that asks
// for the same port is refused, as the cluster would refuse it. A Service that names
// none, left as it is, is neither loaded nor sent (what the server would pick for it
// at random is no prediction of the cluster's), and the report is the one of a run
// that loads and sends everything (the drift helper checks that).
func TestEphemeralHoldsTheServicesThatNameTheirPorts(t *testing.T) {
	svc := func(name, typ, port string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n  type: " + typ + "\n  selector: {app: " + name + "}\n  ports:\n  - {port: 80" + port + "}\n"
	}
	r := repo(t, map[string]string{
		"drift.yaml":       "targets:\n- {name: web, path: web, namespace: web}\n",
		"web/fixed.yaml":   svc("fixed", "NodePort", ", nodePort: 30080"),
		"web/random.yaml":  svc("random", "NodePort", ""),
		"web/cluster.yaml": svc("cluster", "ClusterIP", ""),
		"web/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: a}\n",
	})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"web/new.yaml": svc("new", "NodePort", ", nodePort: 30080"), "web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: b}\n"}, "head"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if o.code != 2 {
		t.Fatalf("exit %d, want 2 (the new Service's port is taken)\n%s", o.code, o.stderr)
	}
	want := map[string]string{"Service/fixed": "unchanged", "Service/random": "unchanged", "Service/cluster": "unchanged", "ConfigMap/c": "modify", "Service/new": "error"}
	if got := categories(rep); !equalMaps(got, want) {
		t.Fatalf("categories = %v\nwant %v", got, want)
	}
	if e := find(t, rep, "Service", "new"); !strings.Contains(e.Error, "30080") || !strings.Contains(e.Error, "already allocated") {
		t.Errorf("Service new: error %q, want the server's refusal of port 30080", e.Error)
	}
	if !strings.Contains(o.stderr, "2 objects the change leaves as the base has them are "+leftAsIsSays) {
		t.Errorf("stderr does not say that the two Services that name no port were left as they are:\n%s", o.stderr)
	}
}
