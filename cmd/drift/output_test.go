package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report"
)

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

// TestDemoGoldenReports runs the README's first command's preview once, writing every
// output a run can write: the text report to --out (a directory it creates, nothing
// on stdout), the JSON report, the pull-request comment and kubectl diff's
// directories. Each is checked: goldens for the reports, the JSON's fields, and the
// dump against the diffs.
func TestDemoGoldenReports(t *testing.T) {
	dir := demoRepo(t)
	outDir := t.TempDir()
	out, js, comment, dump := filepath.Join(outDir, "sub", "report.txt"), filepath.Join(outDir, "report.json"), filepath.Join(outDir, "comment.md"), filepath.Join(outDir, "dump")
	o := drift(t, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main",
		"--out", out, "--json-report", js, "--comment-file", comment, "--dump", dump)
	if o.code != 1 || o.stdout != "" {
		t.Fatalf("exit %d, want 1 and nothing on stdout with --out\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	files := map[string]string{}
	for name, path := range map[string]string{"txt": out, "json": js, "md": comment} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	// The comment is the markdown report after its marker line.
	_, files["md"], _ = strings.Cut(files["md"], "\n")
	for format, text := range files {
		golden.Check(t, "demo."+format, []byte(sanitize(text)))
		if strings.Contains(text, "correct-horse") || strings.Contains(text, "tr0ub4dor") {
			t.Fatalf("%s report shows the demo's secret", format)
		}
	}
	rep := &report.Report{}
	if err := json.Unmarshal([]byte(files["json"]), rep); err != nil {
		t.Fatal(err)
	}
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
	checkJSONFields(t, []byte(files["json"]))
	checkDump(t, rep, dump)
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

// checkDump checks that --dump wrote kubectl diff's two directories and that the
// JSON report's diffs, applied with patch to the live directory, give the merged one.
func checkDump(t *testing.T, rep *report.Report, dump string) {
	t.Helper()
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

// TestExternalDiffProgram: KUBECTL_EXTERNAL_DIFF shows the diffs in the text report,
// as kubectl diff runs it (no shell); the JSON report keeps drift's own; a missing
// program is an error.
func TestExternalDiffProgram(t *testing.T) {
	ns := namespace(t)
	settings := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config, namespace: NS}\ndata: {THEME: THEME_VALUE}\n"
	apply(t, "kubectl", sub(strings.Replace(settings, "THEME_VALUE", "light", 1), ns))
	dir := repo(t, map[string]string{"cm.yaml": sub(strings.Replace(settings, "THEME_VALUE", "dark", 1), ns)}).Dir
	// kubectl's rules: the first word is the program, later words are kept only when
	// they are letters, digits, '-' and '='; "$(touch" and ";" are dropped.
	marker := filepath.Join(t.TempDir(), "pwned")
	js := filepath.Join(t.TempDir(), "report.json")
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "diff -u -N -r $(touch "+marker+") ;")
	o := drift(t, "diff", "--repo", dir, "--ref", "main", "--json-report", js)
	if o.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stdout, "Diff from KUBECTL_EXTERNAL_DIFF:") || !regexp.MustCompile(`(?m)^-  THEME: light\n\+  THEME: dark$`).MatchString(o.stdout) {
		t.Fatalf("external diff output missing:\n%s", o.stdout)
	}
	if strings.Contains(o.stdout, "--- live/") {
		t.Fatal("the in-process diffs are shown although an external program shows them")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a word of KUBECTL_EXTERNAL_DIFF reached a shell")
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{}
	if err := json.Unmarshal(data, rep); err != nil {
		t.Fatal(err)
	}
	if d := find(t, rep, "ConfigMap", "web-config").Diff; !strings.HasPrefix(d, "--- live/") {
		t.Fatalf("JSON must keep the in-process diff, got %q", d)
	}
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "no-such-diff-program-xyz")
	if o := drift(t, "diff", "--repo", dir, "--ref", "main"); o.code != 2 || !strings.Contains(o.stderr, "no-such-diff-program-xyz") {
		t.Fatalf("a missing program: exit %d, %q", o.code, o.stderr)
	}
}

// checkJSONFields checks the JSON report's documented fields.
func checkJSONFields(t *testing.T, data []byte) {
	t.Helper()
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
}

func TestVersion(t *testing.T) {
	o := drift(t, "version")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "drift ") {
		t.Fatalf("exit %d %q", o.code, o.stdout)
	}
}
