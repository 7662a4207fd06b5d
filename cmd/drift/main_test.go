package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/subprocess"
	"github.com/drift-gitops/drift/internal/testenv"
)

// env is the real API server every test in this package talks to.
var env *testenv.Env

func TestMain(m *testing.M) {
	// The test binary doubles as drift, so tests can run it as a process and signal it.
	if os.Getenv("DRIFT_TEST_RUN_MAIN") == "1" || subprocess.Role() != "" {
		main()
		return
	}
	// drift's cache (charts, dry-run answers) is the tests' own, not the user's.
	cache, err := os.MkdirTemp("", "drift-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("DRIFT_CACHE_DIR", cache)
	code := testenv.Main(m, func(e *testenv.Env) { env = e }, serverless...)
	os.RemoveAll(cache)
	stopSecond()
	os.Exit(code)
}

// serverless are the tests of this package that need no API server: without one,
// they alone run.
var serverless = []string{"TestVersion", "TestVersionFlagAndCommand", "TestCompletion", "TestHelpGroupsFlagsAndErrorsPointToIt",
	"TestEveryGitHubFlagReachesPublish", "TestEveryGitLabFlagIsBound", "TestTrustStepLogCarriesNoCommandFromAReport",
	"TestTrustAzureLogCarriesNoLoggingCommand", "TestEverySiteFlagIsBound"}

type outcome struct {
	code           int
	stdout, stderr string
}

// drift runs the command in-process against the test API server.
func drift(t *testing.T, args ...string) outcome {
	t.Helper()
	var out, errOut bytes.Buffer
	if len(args) > 0 && (args[0] == "diff" || args[0] == "detect") && env != nil {
		args = append(args, "--kubeconfig", env.Kubeconfig)
	}
	code := run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	o := outcome{code: code, stdout: out.String(), stderr: errOut.String()}
	if leavesObjectsAsTheyAre(args) && strings.Contains(o.stderr, leftAsIsSays) {
		// Every pull request's preview on a throwaway server that left objects as
		// they are is run again with the whole base loaded and every object sent:
		// what the change leaves as it is must read the same, byte for byte. (One
		// that left none loaded and sent everything already.)
		var all, allErr bytes.Buffer
		allCode := run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &all, ErrOut: &allErr}, append(args, "--ephemeral-load-all"))
		if allCode != code || all.String() != o.stdout {
			t.Errorf("drift %s: the report differs with --ephemeral-load-all (exit %d, then %d):\n%s\n--- with --ephemeral-load-all:\n%s\nstderr:\n%s", strings.Join(args, " "), code, allCode, o.stdout, all.String(), allErr.String())
		}
	}
	return o
}

// leftAsIsSays is what drift says on stderr when an ephemeral server's preview left
// objects as they are, unsent.
const leftAsIsSays = "unchanged without a request (--ephemeral-load-all sends them)"

// leavesObjectsAsTheyAre reports a diff on a throwaway server with a base, that
// writes its report to stdout alone (nothing published, no file written twice).
func leavesObjectsAsTheyAre(args []string) bool {
	if len(args) == 0 || args[0] != "diff" {
		return false
	}
	ephemeral, base := false, false
	for i, a := range args {
		switch {
		case a == "--cluster=ephemeral" || a == "--cluster" && i+1 < len(args) && args[i+1] == "ephemeral":
			ephemeral = true
		case a == "--base" || strings.HasPrefix(a, "--base="):
			base = true
		case a == "--ephemeral-load-all" || a == "--dump" || strings.HasPrefix(a, "--dump=") ||
			strings.HasPrefix(a, "--github") || strings.HasPrefix(a, "--gitlab") || strings.HasPrefix(a, "--gitea") ||
			strings.HasPrefix(a, "--bitbucket") || strings.HasPrefix(a, "--azure") || strings.HasPrefix(a, "--dotenv") || strings.HasPrefix(a, "--out") ||
			strings.HasPrefix(a, "--html") || strings.HasPrefix(a, "--comment") || strings.HasPrefix(a, "--step-summary") ||
			strings.HasPrefix(a, "--annotations"):
			return false
		}
	}
	return ephemeral && base
}

// driftJSON runs drift -o json and decodes the report.
func driftJSON(t *testing.T, args ...string) (*report.Report, outcome) {
	t.Helper()
	o := drift(t, append(args, "-o", "json")...)
	rep := &report.Report{}
	if err := json.Unmarshal([]byte(o.stdout), rep); err != nil {
		t.Fatalf("drift -o json printed no report (exit %d): %v\nstdout:\n%s\nstderr:\n%s", o.code, err, o.stdout, o.stderr)
	}
	return rep, o
}

// categories maps "Kind/name" to category, for assertions.
func categories(rep *report.Report) map[string]string {
	out := map[string]string{}
	for _, t := range rep.Targets {
		for _, o := range t.Objects {
			out[o.Kind+"/"+o.Name] = o.Category
		}
	}
	return out
}

func find(t *testing.T, rep *report.Report, kind, name string) report.Object {
	t.Helper()
	for _, tg := range rep.Targets {
		for _, o := range tg.Objects {
			if o.Kind == kind && o.Name == name {
				return o
			}
		}
	}
	t.Fatalf("report has no %s %s", kind, name)
	return report.Object{}
}

var nsCounter atomic.Int32

// namespace creates a fresh namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("t%d-%s", nsCounter.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	if len(ns) > 60 {
		ns = ns[:60]
	}
	ns = strings.TrimRight(strings.ReplaceAll(ns, "_", "-"), "-")
	apply(t, "kubectl", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n")
	return ns
}

// apply server-side applies YAML documents for real, as a pipeline would.
func apply(t *testing.T, manager, docs string) {
	t.Helper()
	applyTo(t, env.Config, manager, docs)
}

// applyTo applies YAML documents for real to the API server of cfg.
func applyTo(t *testing.T, cfg *rest.Config, manager, docs string) {
	t.Helper()
	clients, err := kube.NewClients(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		gvk := u.GroupVersionKind()
		m, err := clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(u.Object)
		force := true
		ri := clients.Dynamic.Resource(m.Resource)
		var err2 error
		if u.GetNamespace() != "" {
			_, err2 = ri.Namespace(u.GetNamespace()).Patch(context.Background(), u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: manager, Force: &force})
		} else {
			_, err2 = ri.Patch(context.Background(), u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: manager, Force: &force})
		}
		if err2 != nil {
			t.Fatalf("apply %s %s: %v", gvk.Kind, u.GetName(), err2)
		}
	}
}

// repo makes a git repository whose first commit holds files.
func repo(t *testing.T, files map[string]string) *gitfixture.Repo {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(files, "base"); err != nil {
		t.Fatal(err)
	}
	return r
}

// sub replaces NS in a template.
func sub(tmpl, ns string) string { return strings.ReplaceAll(tmpl, "NS", ns) }
