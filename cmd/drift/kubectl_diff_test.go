package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/testenv"
)

// kubectlDiffFile matches the object file names kubectl diff hands to diff.
var kubectlDiffFile = regexp.MustCompile(`(?m)^diff -u -N \S+ \S+/([^/\s]+)$`)

// TestDemoBaseAppliedWithKubectlShowsWhatKubectlDiffShows: the demo repository's
// base applied with plain kubectl apply, then previewed under the kubectl applier:
// drift reports as changed exactly the objects kubectl diff reports, nothing
// untouched among them, and two runs give byte-identical reports.
func TestDemoBaseAppliedWithKubectlShowsWhatKubectlDiffShows(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	e, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Stop() }()
	demo := filepath.Join("..", "..", "testdata", "demo")
	kubectlIn := func(args ...string) (string, int) {
		cmd := exec.Command("kubectl", append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	if out, code := kubectlIn("apply", "-f", filepath.Join(demo, "base", "namespaces.yaml")); code != 0 {
		t.Fatalf("kubectl apply: %s", out)
	}
	if out, code := kubectlIn("apply", "-R", "-f", filepath.Join(demo, "base")); code != 0 {
		t.Fatalf("kubectl apply: %s", out)
	}
	out, code := kubectlIn("diff", "-R", "-f", filepath.Join(demo, "head"))
	if code != 1 {
		t.Fatalf("kubectl diff: exit %d\n%s", code, out)
	}
	var want []string
	for _, m := range kubectlDiffFile.FindAllStringSubmatch(out, -1) {
		want = append(want, m[1])
	}
	sort.Strings(want)
	if len(want) == 0 {
		t.Fatalf("kubectl diff names no object:\n%s", out)
	}
	t.Logf("kubectl diff: %s", strings.Join(want, " "))

	dir := demoRepo(t)
	runDrift := func(args ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr},
			append([]string{"diff", "--repo", dir, "--ref", "main", "--applier", "kubectl", "-o", "json"}, args...))
		return stdout.String(), code
	}
	changed := func(out string, code int) string {
		if code != 1 {
			t.Fatalf("drift: exit %d\n%s", code, out)
		}
		var got []string
		for _, tg := range decodeReport(t, outcome{code: code, stdout: out}).Targets {
			for _, o := range tg.Objects {
				if o.Category != report.Unchanged {
					got = append(got, kubectlName(o))
					if !strings.Contains(o.Diff, "+++ merged/"+kubectlName(o)+"\n") {
						t.Errorf("%s: diff not headed with kubectl's file name:\n%s", o.Title(), o.Diff)
					}
				}
			}
		}
		sort.Strings(got)
		return strings.Join(got, " ")
	}
	first, code := runDrift("--kubeconfig", e.Kubeconfig)
	if got := changed(first, code); got != strings.Join(want, " ") {
		t.Errorf("drift reports as changed:\n  %s\nkubectl diff:\n  %s", got, strings.Join(want, " "))
	}
	if second, _ := runDrift("--kubeconfig", e.Kubeconfig); second != first {
		t.Errorf("two identical runs differ:\n%s\n---\n%s", first, second)
	}
	// The same on a throwaway server seeded with the base as kubectl apply leaves it.
	if got := changed(runDrift("--cluster", "ephemeral", "--base", "base")); got != strings.Join(want, " ") {
		t.Errorf("ephemeral: drift reports as changed:\n  %s\nkubectl diff:\n  %s", got, strings.Join(want, " "))
	}
}

// kubectlName is the name kubectl diff gives an object's file.
func kubectlName(o report.Object) string {
	gv := o.Version
	if o.Group != "" {
		gv = o.Group + "." + o.Version
	}
	return gv + "." + o.Kind + "." + o.Namespace + "." + o.Name
}
