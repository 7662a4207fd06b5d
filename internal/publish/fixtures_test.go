package publish

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/github/githubtest"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/scrub"
)

const (
	token   = "ghs_publish-test-token"
	headSHA = "abcdef0123456789abcdef0123456789abcdef01"
)

// configMap is a ConfigMap in namespace shop.
func configMap(name string, data map[string]string) *unstructured.Unstructured {
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "shop"},
		"data":     d,
	}}
}

func result(obj, live, merged *unstructured.Unstructured) dryrun.Result {
	return dryrun.Result{Object: render.Object{Obj: obj, Source: obj.GetName() + ".yaml", Doc: 1}, ID: object.IDOf(obj), Live: live, Merged: merged}
}

// added, modified, deleted and failed are dry-run results as the preview gives them.
func added(name string, data map[string]string) dryrun.Result {
	return result(configMap(name, data), nil, configMap(name, data))
}

func modified(name string, from, to map[string]string) dryrun.Result {
	return result(configMap(name, to), configMap(name, from), configMap(name, to))
}

func deleted(name string) dryrun.Result {
	r := result(configMap(name, nil), configMap(name, map[string]string{"k": "v"}), nil)
	r.Inventory = "apply-config ConfigMap shop/inventory"
	return r
}

func failed(name, msg string) dryrun.Result {
	r := result(configMap(name, nil), nil, nil)
	r.Err = &dryrun.Message{Reason: "invalid", Message: msg}
	return r
}

// preview is the report of a pull request's preview of one target, web.
func preview(t *testing.T, results ...dryrun.Result) *report.Report {
	t.Helper()
	return build(t, entry.Input{Ref: "refs/pull/7/merge", Commit: headSHA, Targets: []entry.TargetInput{{Name: "web", Results: results}}})
}

// driftCheck is the report of drift detect on one target, web.
func driftCheck(t *testing.T, results ...dryrun.Result) *report.Report {
	t.Helper()
	return build(t, entry.Input{Ref: "main", Commit: headSHA, Drift: true, Targets: []entry.TargetInput{{Name: "web", Results: results}}})
}

func build(t *testing.T, in entry.Input) *report.Report {
	t.Helper()
	rep, err := entry.Build(in, entry.NewBuilder(entry.Options{}, scrub.New()))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// harness is what a publication reaches: the Actions environment of a job against a
// GitHub stand-in, and what it says on stderr and as warnings.
type harness struct {
	srv     *githubtest.Server
	env     map[string]string
	dir     string
	mu      sync.Mutex
	stderr  bytes.Buffer
	warned  []string
	summary string // the job summary file
}

// newHarness is a pull_request job on pull request pr (0: no pull request event, as
// in a scheduled drift check).
func newHarness(t *testing.T, pr int) *harness {
	t.Helper()
	srv := githubtest.New(token)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	h := &harness{srv: srv, dir: dir, summary: filepath.Join(dir, "summary.md"), env: map[string]string{
		"GITHUB_TOKEN": token, "GITHUB_REPOSITORY": "acme/gitops", "GITHUB_API_URL": srv.URL,
		"GITHUB_SHA": "0000000000000000000000000000000000000000",
	}}
	h.env["GITHUB_STEP_SUMMARY"] = h.summary
	if pr > 0 {
		event := filepath.Join(dir, "event.json")
		data := fmt.Sprintf(`{"number": %d, "pull_request": {"number": %d, "head": {"sha": %q}}}`, pr, pr, headSHA)
		if err := os.WriteFile(event, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		h.env["GITHUB_EVENT_PATH"] = event
	}
	return h
}

func (h *harness) getenv(k string) string { return h.env[k] }

func (h *harness) deps() Deps {
	return Deps{
		Getenv:    h.getenv,
		Transport: h.srv.Client().Transport,
		Stderr:    &h.stderr,
		Warn: func(msg string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.warned = append(h.warned, msg)
		},
	}
}

// publish runs Run and returns what it said on stderr this time.
func (h *harness) publish(t *testing.T, rep *report.Report, opts Options) (string, error) {
	t.Helper()
	h.stderr.Reset()
	err := Run(t.Context(), rep, opts, h.deps())
	return h.stderr.String(), err
}

// path is a file in the harness's directory.
func (h *harness) path(name string) string { return filepath.Join(h.dir, name) }

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// refuseAll answers every request as GitHub answers a fork's read-only token.
func refuseAll(w http.ResponseWriter, _ *http.Request, _ int) bool {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprint(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`)
	return true
}

// unreachable is a transport to a GitHub that cannot be reached.
type unreachable struct{}

func (unreachable) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: connection refused")
}

// reportInput is a preview of targets with one added object each.
func reportInput(targets ...string) entry.Input {
	in := entry.Input{Ref: "refs/pull/7/merge", Commit: headSHA}
	for _, name := range targets {
		in.Targets = append(in.Targets, entry.TargetInput{Name: name, Results: []dryrun.Result{added(name+"-settings", nil)}})
	}
	return in
}
