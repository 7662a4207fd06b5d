package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

// demoRepo builds the demo repository of testdata/demo: tag base, branch main.
func demoRepo(t *testing.T) string {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "..", "testdata", "demo")
	if _, err := r.CommitTree(filepath.Join(src, "base"), "demo: base state of the cluster"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitTree(filepath.Join(src, "head"), "demo: the change under review"); err != nil {
		t.Fatal(err)
	}
	return r.Dir
}

// volatile matches what a server generates per run; goldens hold placeholders.
var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`uid: [0-9a-f-]{36}`), "uid: UID"},
	{regexp.MustCompile(`creationTimestamp: (\\?")[0-9TZ:-]+(\\?")`), `creationTimestamp: ${1}TIME${2}`},
}

func sanitize(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.repl)
	}
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/drift -update creates it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from the golden file (go test -update rewrites it; review the diff):\n%s", name, got)
	}
}

// TestDemoGoldenReports runs the README's first command's preview in every format.
func TestDemoGoldenReports(t *testing.T) {
	dir := demoRepo(t)
	args := []string{"diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main"}
	for _, format := range []string{"text", "markdown", "json"} {
		o := drift(t, append(args, "-o", format)...)
		if o.code != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s\n%s", format, o.code, o.stdout, o.stderr)
		}
		golden(t, "demo."+map[string]string{"text": "txt", "markdown": "md", "json": "json"}[format], sanitize(o.stdout))
		if strings.Contains(o.stdout, "correct-horse") || strings.Contains(o.stdout, "tr0ub4dor") {
			t.Fatalf("%s report shows the demo's secret", format)
		}
	}
	rep, _ := driftJSON(t, args...)
	if rep.Cluster != "ephemeral" || rep.Base != "base" || rep.BaseCommit == "" {
		t.Fatalf("the report does not say it ran on an ephemeral server: %+v", rep)
	}
	want := map[string]string{
		"Namespace/shop": "unchanged", "Namespace/blog": "unchanged",
		"Deployment/web": "modify", "Service/web": "unchanged", "ConfigMap/web-config": "modify", "Secret/db": "modify",
		"Deployment/blog": "unchanged", "ConfigMap/blog-config": "unchanged", "Service/blog": "add",
	}
	if got := categories(rep); !equalMaps(got, want) {
		t.Fatalf("categories = %v\nwant %v", got, want)
	}
}

func TestEphemeralWithoutBaseAddsEverything(t *testing.T) {
	dir := demoRepo(t)
	rep, o := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--ref", "main")
	if o.code != 1 || rep.Summary.Add != 9 || rep.Summary.Unchanged+rep.Summary.Modify+rep.Summary.Error != 0 {
		t.Fatalf("exit %d, summary %+v (namespaces created for the preview must still be additions)\n%s", o.code, rep.Summary, o.stderr)
	}
}

func TestEphemeralMissingBinaries(t *testing.T) {
	dir := demoRepo(t)
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	o := drift(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--ref", "main")
	if o.code != 2 || !strings.Contains(o.stderr, "run drift setup, or set KUBEBUILDER_ASSETS") {
		t.Fatalf("exit %d, stderr %q", o.code, o.stderr)
	}
}

// TestDumpAndPatch checks that --dump writes kubectl diff's two directories and that the
// JSON report's diffs, applied with patch to the live directory, give the merged one.
func TestDumpAndPatch(t *testing.T) {
	dir := demoRepo(t)
	dump := t.TempDir()
	rep, o := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main", "--dump", dump)
	if o.code != 1 {
		t.Fatalf("exit %d", o.code)
	}
	work := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(dump, "live"), work).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	var patchText strings.Builder
	for _, obj := range rep.Targets[0].Objects {
		patchText.WriteString(obj.Diff)
	}
	cmd := exec.Command("patch", "-p1", "--batch", "-s", "-d", filepath.Join(work, "live"))
	cmd.Stdin = strings.NewReader(patchText.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch refused drift's diffs: %v\n%s", err, out)
	}
	out, err := exec.Command("diff", "-r", filepath.Join(work, "live"), filepath.Join(dump, "merged")).CombinedOutput()
	if err != nil {
		t.Fatalf("patched live differs from merged: %s", out)
	}
	names, _ := filepath.Glob(filepath.Join(dump, "merged", "*"))
	var base []string
	for _, n := range names {
		base = append(base, filepath.Base(n))
	}
	if got := strings.Join(base, ","); got != "apps.v1.Deployment.shop.web,v1.ConfigMap.shop.web-config,v1.Secret.shop.db,v1.Service.blog.blog" {
		t.Fatalf("merged/ holds %s", got)
	}
	if _, err := os.Stat(filepath.Join(dump, "live", "v1.Service.blog.blog")); err == nil {
		t.Fatal("an added object has no live file")
	}
	data, _ := os.ReadFile(filepath.Join(dump, "merged", "v1.Secret.shop.db"))
	if strings.Contains(string(data), "tr0ub4dor") || !strings.Contains(string(data), "*** (after)") {
		t.Fatalf("dumped secret is not masked:\n%s", data)
	}
}

func TestExternalDiffProgram(t *testing.T) {
	dir := demoRepo(t)
	// kubectl's rules: the first word is the program, later words are kept only when
	// they are letters, digits, '-' and '='; "$(touch" and ";" are dropped.
	marker := filepath.Join(t.TempDir(), "pwned")
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "diff -u -N -r $(touch "+marker+") ;")
	o := drift(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if o.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stdout, "Diff from KUBECTL_EXTERNAL_DIFF:") || !regexp.MustCompile(`(?m)^-  THEME: light\n\+  THEME: dark$`).MatchString(o.stdout) {
		t.Fatalf("external diff output missing:\n%s", o.stdout)
	}
	if strings.Contains(o.stdout, "@@ -0,0 +1,") && strings.Contains(o.stdout, "--- live/") {
		t.Fatal("the in-process diffs are shown although an external program shows them")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a word of KUBECTL_EXTERNAL_DIFF reached a shell")
	}
	rep, _ := driftJSON(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if d := find(t, rep, "ConfigMap", "web-config").Diff; !strings.HasPrefix(d, "--- live/") {
		t.Fatalf("JSON must keep the in-process diff, got %q", d)
	}
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "no-such-diff-program-xyz")
	if o := drift(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main"); o.code != 2 || !strings.Contains(o.stderr, "no-such-diff-program-xyz") {
		t.Fatalf("a missing program: exit %d, %q", o.code, o.stderr)
	}
}

func TestOutFileAndJSONSchemaFields(t *testing.T) {
	dir := demoRepo(t)
	out := filepath.Join(t.TempDir(), "sub", "report.json")
	o := drift(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main", "-o", "json", "--out", out)
	if o.code != 1 || o.stdout != "" {
		t.Fatalf("exit %d, stdout %q", o.code, o.stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"schemaVersion", "ref", "commit", "complete", "summary", "targets"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("JSON report lacks %q", key)
		}
	}
	obj := doc["targets"].([]any)[0].(map[string]any)["objects"].([]any)[0].(map[string]any)
	for _, key := range []string{"category", "group", "version", "kind", "namespace", "name", "source", "warnings", "error"} {
		if _, ok := obj[key]; !ok {
			t.Errorf("JSON object lacks %q", key)
		}
	}
	var rep report.Report
	_ = json.Unmarshal(data, &rep)
	if rep.Summary.Add != 1 || rep.Summary.Modify != 3 {
		t.Fatalf("summary %+v", rep.Summary)
	}
}

func TestVersion(t *testing.T) {
	o := drift(t, "version")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "drift ") {
		t.Fatalf("exit %d %q", o.code, o.stdout)
	}
}
