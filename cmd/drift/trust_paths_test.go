package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// hostileCRRepo is a change that adds a CRD and, in the same change, custom resources
// whose identities climb out of any directory they name: the server never sees them
// (their kind does not exist yet), so only drift can refuse them.
func hostileCRRepo(t *testing.T) (dir, group string) {
	t.Helper()
	group = fmt.Sprintf("g%d.example.com", nsCounter.Add(1))
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
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
	cr := "apiVersion: " + group + "/v1\nkind: Gadget\nmetadata: {%s}\nspec: {size: 1}\n"
	r := repo(t, map[string]string{
		"crd.yaml":       strings.ReplaceAll(crd, "GROUP", group),
		"traversal.yaml": fmt.Sprintf(cr, `name: "x/../../../escaped"`),
		"namespace.yaml": fmt.Sprintf(cr, `name: fine, namespace: "../../../escaped-ns"`),
		"upper.yaml":     fmt.Sprintf(cr, `name: Upper`),
		"cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: healthy}\ndata: {k: v}\n",
	})
	return r.Dir, group
}

// tree lists every path below root, so a test can see what a run wrote anywhere there.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// assertHostileRefused checks that the hostile custom resources are invalid errors
// naming their file and rule, and that the healthy objects are still additions.
func assertHostileRefused(t *testing.T, rep *report.Report, group string) {
	t.Helper()
	for _, tc := range []struct{ name, source, rule string }{
		{"x/../../../escaped", "traversal.yaml", `metadata.name "x/../../../escaped" is not a path segment: may not contain '/'`},
		{"fine", "namespace.yaml", `metadata.namespace "../../../escaped-ns" is not a DNS label (RFC 1123)`},
		{"Upper", "upper.yaml", `metadata.name: Invalid value: "Upper": a lowercase RFC 1123 subdomain`},
	} {
		o := find(t, rep, "Gadget", tc.name)
		if o.Category != report.Error || o.ErrorReason != "invalid" || o.Source != tc.source || !strings.Contains(o.Error, tc.rule) {
			t.Errorf("Gadget %q: %s %s from %q: %q; want an invalid error from %s saying %s", tc.name, o.Category, o.ErrorReason, o.Source, o.Error, tc.source, tc.rule)
		}
	}
	if c := find(t, rep, "ConfigMap", "healthy"); c.Category != report.Add {
		t.Errorf("the healthy ConfigMap is %s: %s", c.Category, c.Error)
	}
	if c := find(t, rep, "CustomResourceDefinition", "gadgets."+group); c.Category != report.Add {
		t.Errorf("the CRD is %s: %s", c.Category, c.Error)
	}
}

func TestDumpNeverWritesOutsideItsDirectoryForCRsOfAPendingCRD(t *testing.T) {
	ns := namespace(t)
	dir, group := hostileCRRepo(t)
	parent := t.TempDir()
	dump := filepath.Join(parent, "a", "dump")
	rep, o := driftJSON(t, "diff", "--repo", dir, "--ref", "main", "-n", ns, "--dump", dump)
	if o.code != 2 {
		t.Fatalf("exit %d; want 2 (invalid objects)\n%s", o.code, o.stderr)
	}
	assertHostileRefused(t, rep, group)
	got := strings.Join(tree(t, parent), "\n")
	want := strings.Join([]string{".", "a", "a/dump", "a/dump/live", "a/dump/merged",
		"a/dump/merged/apiextensions.k8s.io.v1.CustomResourceDefinition..gadgets." + group,
		"a/dump/merged/v1.ConfigMap." + ns + ".healthy"}, "\n")
	if got != want {
		t.Fatalf("--dump wrote:\n%s\nwant:\n%s", got, want)
	}
}

func TestExternalDiffNeverWritesOutsideItsDirectoryForCRsOfAPendingCRD(t *testing.T) {
	ns := namespace(t)
	dir, group := hostileCRRepo(t)
	record := t.TempDir()
	script := filepath.Join(record, "record-diff")
	// The program records its arguments and what it was given to compare.
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > \""+record+"/argv\"\n"+
		"(cd \"$1/..\" && find . | sort) > \""+record+"/files\"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// drift's temporary directory is made under TMPDIR: anything climbing out of it
	// lands in tmp.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("KUBECTL_EXTERNAL_DIFF", script)
	o := drift(t, "diff", "--repo", dir, "--ref", "main", "-n", ns)
	if o.code != 2 || !strings.Contains(o.stdout, "Diff from KUBECTL_EXTERNAL_DIFF:") {
		t.Fatalf("exit %d; want 2 and the external diff\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if left := tree(t, tmp); len(left) != 1 {
		t.Fatalf("drift left or wrote outside its directory in TMPDIR:\n%s", strings.Join(left, "\n"))
	}
	argv, err := os.ReadFile(filepath.Join(record, "argv"))
	if err != nil {
		t.Fatalf("the program did not run: %v", err)
	}
	args := strings.Split(strings.TrimSpace(string(argv)), "\n")
	if len(args) != 2 || filepath.Base(args[0]) != "live" || filepath.Base(args[1]) != "merged" || !strings.HasPrefix(args[0], tmp+"/") {
		t.Fatalf("program arguments: %q", args)
	}
	files, _ := os.ReadFile(filepath.Join(record, "files"))
	want := strings.Join([]string{".", "./live", "./merged",
		"./merged/apiextensions.k8s.io.v1.CustomResourceDefinition..gadgets." + group,
		"./merged/v1.ConfigMap." + ns + ".healthy"}, "\n")
	if got := strings.TrimSpace(string(files)); got != want {
		t.Fatalf("the program was given:\n%s\nwant:\n%s", got, want)
	}
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "")
	rep, _ := driftJSON(t, "diff", "--repo", dir, "--ref", "main", "-n", ns)
	assertHostileRefused(t, rep, group)
}

// TestPendingCRNamesAreJudgedAsTheServerJudgesThem checks the prediction against the
// answer: once the CRD exists, the server itself refuses the same custom resource.
func TestPendingCRNamesAreJudgedAsTheServerJudgesThem(t *testing.T) {
	ns := namespace(t)
	dir, _ := hostileCRRepo(t)
	rep, _ := driftJSON(t, "diff", "--repo", dir, "--ref", "main", "-n", ns)
	pending := find(t, rep, "Gadget", "Upper")
	crd, err := os.ReadFile(filepath.Join(dir, "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, "kubectl", string(crd))
	var served report.Object
	for range 100 { // until discovery serves the new kind
		rep, _ = driftJSON(t, "diff", "--repo", dir, "--ref", "main", "-n", ns)
		if served = find(t, rep, "Gadget", "Upper"); strings.Contains(served.Error, "the API server rejects") {
			break
		}
	}
	const rule = `metadata.name: Invalid value: "Upper": a lowercase RFC 1123 subdomain must consist of`
	if !strings.Contains(served.Error, "the API server rejects") || served.ErrorReason != "invalid" || !strings.Contains(served.Error, rule) {
		t.Fatalf("the server's answer: %s %q", served.ErrorReason, served.Error)
	}
	if pending.ErrorReason != served.ErrorReason || !strings.Contains(pending.Error, rule) {
		t.Fatalf("drift predicted %s %q; the server answers %s %q", pending.ErrorReason, pending.Error, served.ErrorReason, served.Error)
	}
	if c := find(t, rep, "Gadget", "x/../../../escaped"); c.ErrorReason != "invalid" {
		t.Fatalf("once the CRD is served, the traversal name is %s %q", c.ErrorReason, c.Error)
	}
}

// TestObjectsInAPendingNamespaceAreJudgedAsTheServerJudgesThem: the server stops at the
// missing namespace before it checks the name, so drift checks it with the kind's rule,
// and once the namespace exists the server gives the same answer.
func TestObjectsInAPendingNamespaceAreJudgedAsTheServerJudgesThem(t *testing.T) {
	ns := fmt.Sprintf("pending-%d", nsCounter.Add(1))
	nsDoc := "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n"
	r := repo(t, map[string]string{
		"ns.yaml":    nsDoc,
		"upper.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Upper, namespace: " + ns + "}\n",
		"role.yaml":  "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: \"system:reader\", namespace: " + ns + "}\n",
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 2 {
		t.Fatalf("exit %d; want 2\n%s", o.code, o.stderr)
	}
	const rule = `metadata.name "Upper" is not a DNS subdomain (RFC 1123): a lowercase RFC 1123 subdomain must consist of`
	if c := find(t, rep, "ConfigMap", "Upper"); c.ErrorReason != "invalid" || c.Source != "upper.yaml" || !strings.Contains(c.Error, rule) {
		t.Errorf("ConfigMap Upper in a pending namespace: %s %s %q", c.Category, c.ErrorReason, c.Error)
	}
	if c := find(t, rep, "Role", "system:reader"); c.Category != report.Add {
		t.Errorf("a Role's name need only be a path segment: %s %q", c.Category, c.Error)
	}
	apply(t, "kubectl", nsDoc)
	rep, _ = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if c := find(t, rep, "ConfigMap", "Upper"); c.ErrorReason != "invalid" || !strings.Contains(c.Error, "the API server rejects") ||
		!strings.Contains(c.Error, "a lowercase RFC 1123 subdomain must consist of") {
		t.Errorf("the server's answer differs from drift's prediction: %s %q", c.ErrorReason, c.Error)
	}
	if c := find(t, rep, "Role", "system:reader"); c.Category != report.Add {
		t.Errorf("the server's answer for the Role differs: %s %q", c.Category, c.Error)
	}
}
