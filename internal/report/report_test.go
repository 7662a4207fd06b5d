package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func result(t *testing.T, source string, doc int, rendered, live, merged string) dryrun.Result {
	t.Helper()
	r := dryrun.Result{Object: render.Object{Obj: obj(t, rendered), Source: source, Doc: doc}}
	r.ID = object.IDOf(r.Object.Obj)
	if live != "" {
		r.Live = obj(t, live)
	}
	if merged != "" {
		r.Merged = obj(t, merged)
	}
	return r
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// sampleInput has one object of every category, a warning, a Secret and a render failure.
func sampleInput(t *testing.T) Input {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {color: green}\n"
	cmLive := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop, uid: u1, resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: kubectl}]}\ndata: {color: blue, size: '3'}\n"
	cmMerged := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop, uid: u1, resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{manager: kubectl}]}\ndata: {color: green, size: '3'}\n"
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n"
	svcMerged := "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop, uid: new, resourceVersion: '1', creationTimestamp: '2026-01-02T00:00:00Z'}\nspec: {clusterIP: 10.0.0.0, clusterIPs: [10.0.0.0], ports: [{port: 80, protocol: TCP, targetPort: 80}], type: ClusterIP}\n"
	sec := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData: {password: s3cr3t-new, user: admin}\n"
	secLive := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"s3cr3t-old\"}}'}}\ndata: {password: " + b64("s3cr3t-old") + ", user: " + b64("admin") + "}\n"
	secMerged := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"s3cr3t-old\"}}'}}\ndata: {password: " + b64("s3cr3t-new") + ", user: " + b64("admin") + "}\n"
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 2}\n"
	depLive := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, generation: 3}\nspec: {replicas: 2}\n"
	bad := "apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: shop}\nstringData: {key: '@someone ```leak'}\n"

	r := []dryrun.Result{
		result(t, "shop/config.yaml", 1, cm, cmLive, cmMerged),
		result(t, "shop/svc.yaml", 1, svc, "", svcMerged),
		result(t, "shop/secret.yaml", 2, sec, secLive, secMerged),
		result(t, "shop/deploy.yaml", 1, dep, depLive, depLive),
		result(t, "shop/tls.yaml", 1, bad, "", ""),
	}
	r[0].Warnings = []dryrun.Message{{Reason: reason.Conflict, Message: "apply conflicts with other field managers: .data.color owned by \"kubectl-edit\""}}
	r[4].Err = &dryrun.Message{Reason: reason.Invalid, Message: "the API server rejects this object: Secret \"tls\" is invalid: data[key]: Invalid value: \"@someone ```leak\": bad"}
	return Input{
		Ref:    "main",
		Commit: "0123456789abcdef0123456789abcdef01234567",
		Targets: []TargetInput{{
			Name:     "shop",
			Results:  r,
			Failures: []render.Failure{{Source: "shop/broken.yaml", Doc: 3, Reason: reason.Malformed, Message: "malformed YAML: yaml: line 2: mapping values are not allowed in this context"}},
		}},
	}
}

func TestGoldenReports(t *testing.T) {
	rep, err := Build(sampleInput(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text, color, md, js bytes.Buffer
	if err := WriteText(&text, rep, TextOptions{ShowUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&color, rep, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, rep, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.txt", text.Bytes())
	golden.Check(t, "report.color.txt", color.Bytes())
	golden.Check(t, "report.md", md.Bytes())
	golden.Check(t, "report.json", js.Bytes())

	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "json": js.String()} {
		for _, secret := range []string{"s3cr3t", b64("s3cr3t-old"), b64("s3cr3t-new"), "@someone", "leak"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s report shows secret value %q", name, secret)
			}
		}
	}
	if rep.Complete || rep.Summary != (Summary{Add: 1, Modify: 2, Unchanged: 1, Error: 2, Risky: 1}) {
		t.Fatalf("summary = %+v complete=%v", rep.Summary, rep.Complete)
	}
	// Same input, byte-identical output.
	rep2, _ := Build(sampleInput(t), Options{})
	var js2 bytes.Buffer
	_ = WriteJSON(&js2, rep2)
	if !bytes.Equal(js.Bytes(), js2.Bytes()) {
		t.Fatal("two builds of the same input differ")
	}
	var decoded map[string]any
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || decoded["schemaVersion"] != SchemaVersion {
		t.Fatalf("JSON does not decode with the schema version: %v", err)
	}
}

func TestMaskSecrets(t *testing.T) {
	live := obj(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, annotations: {kubectl.kubernetes.io/last-applied-configuration: x}}\ndata: {same: YQ==, changed: Yg==, gone: Yw==}\n")
	merged := obj(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, annotations: {kubectl.kubernetes.io/last-applied-configuration: x}}\ndata: {same: YQ==, changed: ZA==, added: ZQ==}\n")
	maskSecrets(live, merged)
	l, _ := toYAML(live)
	m, _ := toYAML(merged)
	wantL := "apiVersion: v1\ndata:\n  changed: '*** (before)'\n  gone: '***'\n  same: '***'\nkind: Secret\nmetadata:\n  name: s\n"
	wantM := "apiVersion: v1\ndata:\n  added: '***'\n  changed: '*** (after)'\n  same: '***'\nkind: Secret\nmetadata:\n  name: s\n"
	if l != wantL || m != wantM {
		t.Fatalf("live:\n%s\nmerged:\n%s", l, m)
	}
}

func TestShowSecretsLeavesValues(t *testing.T) {
	rep, err := Build(sampleInput(t), Options{ShowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	_ = WriteJSON(&js, rep)
	if !strings.Contains(js.String(), b64("s3cr3t-new")) {
		t.Fatal("--show-secrets should show values")
	}
}

func TestCodeSpanAndFenceCannotBeEscaped(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "`plain`",
		"a`b":        "``a`b``",
		"`edge":      "`` `edge ``",
		"x```y":      "````x```y````",
		"two\nlines": "`two lines`",
		"cr\rcrlf\r\nvt\vff\fnel\u0085ls\u2028ps\u2029end": "`cr crlf vt ff nel ls ps end`",
	} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := cellCode("a|b\\|`c`"), "`` a\\|b\\\\|`c` ``"; got != want {
		t.Errorf("cellCode = %q, want %q", got, want)
	}
	if got, want := htmlCode("<b>@team\r\n\r\n#42</b>"), "<code>&lt;b&gt;@team  #42&lt;/b&gt;</code>"; got != want {
		t.Errorf("htmlCode = %q, want %q", got, want)
	}
	var b bytes.Buffer
	writeFence(&b, "diff", "+ value: ```` @someone")
	if !strings.Contains(b.String(), "\n`````diff\n") {
		t.Fatalf("fence not longer than the content's run:\n%s", b.String())
	}
}

// budgetInput is sampleInput with n more ConfigMaps changed, each diff larger than
// the Secret's, so that a budget must choose.
func budgetInput(t *testing.T, n int) Input {
	in := sampleInput(t)
	for i := 0; i < n; i++ {
		var data strings.Builder
		for k := 0; k < 8; k++ {
			fmt.Fprintf(&data, "k%d: v%d, ", k, i)
		}
		name := fmt.Sprintf("dash-%03d", i)
		live := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop}\ndata: {" + data.String() + "}\n"
		merged := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop}\ndata: {" + strings.ReplaceAll(data.String(), "v", "w") + "}\n"
		in.Targets[0].Results = append(in.Targets[0].Results, result(t, "shop/dash.yaml", i+1, merged, live, merged))
	}
	return in
}

// TestGoldenBudgetedMarkdown: under a comment's budget, errors and risks come first,
// the risky object's diff is kept before larger ones, and what does not fit is named
// with a pointer to the full report; the summary-only variant has no objects.
func TestGoldenBudgetedMarkdown(t *testing.T) {
	rep, err := Build(budgetInput(t, 12), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var full, budget, summary bytes.Buffer
	if err := WriteMarkdown(&full, rep, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	max := full.Len() * 2 / 3
	opts := MarkdownOptions{MaxBytes: max, FullReport: "[the job summary](https://github.example/run/1)"}
	if err := WriteMarkdown(&budget, rep, opts); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&summary, rep, MarkdownOptions{SummaryOnly: true}); err != nil {
		t.Fatal(err)
	}
	b := budget.String()
	if budget.Len() > max || strings.Count(b, "```")%2 != 0 {
		t.Errorf("budgeted report of %d bytes (max %d), or a fence left open", budget.Len(), max)
	}
	if !strings.Contains(b, "did not fit") || !strings.Contains(b, "details in [the job summary](https://github.example/run/1)") {
		t.Errorf("no diff was left out, or a left-out object does not point to the full report")
	}
	if !(strings.Index(b, "**Errors (2)**") < strings.Index(b, "**Risks (1)**") && strings.Index(b, "**Risks (1)**") < strings.Index(b, "| Target |")) {
		t.Errorf("errors and risks are not at the top")
	}
	if !strings.Contains(b, "+  password: '*** (after)'") {
		t.Errorf("the risky Secret's diff was left out")
	}
	golden.Check(t, "report.budget.md", budget.Bytes())
	golden.Check(t, "report.summary.md", summary.Bytes())
}

// TestBudgetKeepsErrorsAndRisksAmongThousands: with thousands of changed objects the
// comment names as many as half its budget holds, and never drops an error's or a
// risky object's line.
func TestBudgetKeepsErrorsAndRisksAmongThousands(t *testing.T) {
	rep, err := Build(budgetInput(t, 3000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep, MarkdownOptions{MaxBytes: 65536}); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	if md.Len() > 65536 {
		t.Fatalf("%d bytes over the budget", md.Len())
	}
	for _, want := range []string{"- ✏️ `v1 Secret shop/db`", "- ❌ `v1 Secret shop/tls`", "more objects: see the job summary", "- ✏️ `v1 ConfigMap shop/dash-000`"} {
		if !strings.Contains(s, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
}
