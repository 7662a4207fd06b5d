package entry_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/scrub"
)

// everything renders a report every way it leaves drift: text, markdown, JSON and the
// files of --dump.
func everything(t *testing.T, rep *report.Report) string {
	t.Helper()
	var all bytes.Buffer
	if err := write.Text(&all, rep, write.TextOptions{ShowUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	if err := write.Markdown(&all, rep, write.MarkdownOptions{ShowUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(&all, rep); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := write.Dump(dir, rep); err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all.Write(b)
		}
		return err
	})
	return all.String()
}

// secretResult is a Secret the server refused, as it is for a value that is not a
// string; the value is only in what the repository rendered.
func secretResult(name string, stringData map[string]any) dryrun.Result {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": "shop"}, "stringData": stringData}}
	return dryrun.Result{ID: object.IDOf(u), Object: render.Object{Obj: u, Source: "secret.yaml", Doc: 1},
		Err: &dryrun.Message{Reason: reason.Invalid, Message: "the API server rejects this object"}}
}

// quoting is an object of another target whose error and warning quote text.
func quoting(t *testing.T, text string) dryrun.Result {
	r := reporttest.Result(t, "cm.yaml", 1, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: shop}\n", "", "")
	r.Err = &dryrun.Message{Reason: reason.WebhookDenied, Message: "admission webhook policy.example denies this object. The server said: " + text}
	r.Warnings = []dryrun.Message{{Reason: "warning", Message: "note: " + text}}
	return r
}

func b64std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// jsonEscaped is s as a JSON string without its quotes.
func jsonEscaped(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }

// TestEveryFormOfEveryTypeIsScrubbedFromOtherObjects puts a value of each type in a
// Secret and quotes it, in each form a server or webhook may use, in the error and
// warning of an object of another target. No form may reach any output.
func TestEveryFormOfEveryTypeIsScrubbedFromOtherObjects(t *testing.T) {
	t.Parallel()
	multi := "first-line-of-key\nsecond \"quoted\" line\n}\n"
	for _, c := range []struct {
		name  string
		value any
		forms []string
	}{
		{"string", "hunter2-password", []string{"hunter2-password", b64std("hunter2-password"),
			base64.URLEncoding.EncodeToString([]byte("hunter2-password?>")), base64.RawStdEncoding.EncodeToString([]byte("hunter2-password")),
			base64.RawURLEncoding.EncodeToString([]byte("hunter2-password")), strconv.Quote("hunter2-password")}},
		{"int", int64(98765432123), []string{"98765432123", "&value.valueUnstructured{Value:98765432123}", b64std("98765432123"), "9.8765432123e+10"}},
		{"big int", float64(12345678901234567890), []string{"1.2345678901234567e+19", "12345678901234567000"}},
		{"float", 1e6, []string{"{Value:1000000}", "1e+06"}},
		{"fraction", 3.14159265, []string{"3.14159265", b64std("3.14159265")}},
		{"map", map[string]any{"inner": "secretinner-1", "n": int64(31415926)}, []string{`map[string]interface {}{"inner":"secretinner-1", "n":31415926}`,
			`{"inner":"secretinner-1","n":31415926}`, jsonEscaped(`{"inner":"secretinner-1","n":31415926}`), b64std("secretinner-1")}},
		{"list", []any{"listitem-secret", int64(27182818)}, []string{`[]interface {}{"listitem-secret", 27182818}`, `["listitem-secret",27182818]`}},
		{"multi-line", multi, []string{multi, jsonEscaped(multi), strconv.Quote(multi), b64std(multi), "line 2: second \"quoted\" line",
			"first-line-of-key\\nsecond \\\"quoted\\\" line", "key starts " + jsonEscaped("first-line-of-key")}},
		{"special characters", `pa"ss\word<&>`, []string{`pa"ss\word<&>`, jsonEscaped(`pa"ss\word<&>`), `pa\"ss\\word<&>`, strconv.QuoteToASCII(`pa"ss\word<&>`), "pa%22ss%5Cword%3C%26%3E"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			quoted := strings.Join(c.forms, " | ")
			rep := entrytest.Build(t, entry.Input{Targets: []entry.TargetInput{
				{Name: "a", Results: []dryrun.Result{secretResult("s", map[string]any{"v": c.value})}},
				{Name: "b", Results: []dryrun.Result{quoting(t, quoted)}},
			}}, entry.Options{})
			out := everything(t, rep)
			for _, f := range c.forms {
				if strings.Contains(out, f) {
					t.Errorf("form %q reaches the output", f)
				}
			}
			for _, leaf := range []string{"secretinner-1", "31415926", "listitem-secret", "first-line-of-key", "second \"quoted\" line", "hunter2"} {
				if strings.Contains(out, leaf) {
					t.Errorf("%q reaches the output", leaf)
				}
			}
			if !strings.Contains(find(rep, "ConfigMap").Error, "The server said: ") || !strings.Contains(find(rep, "ConfigMap").Error, "***") {
				t.Errorf("the message is not scrubbed where expected: %q", find(rep, "ConfigMap").Error)
			}
		})
	}
}

func find(rep *report.Report, kind string) report.Object {
	for _, t := range rep.Targets {
		for _, o := range t.Objects {
			if o.Kind == kind {
				return o
			}
		}
	}
	return report.Object{}
}

// TestShortValuesAndLiteralsAreMaskedButNotScrubbedEverywhere: a value shorter than
// MinScrubLength, a boolean, and the trivial lines of a multi-line value leave the
// rest of the report alone, while the Secret's own fields stay masked.
func TestShortValuesAndLiteralsAreMaskedButNotScrubbedEverywhere(t *testing.T) {
	t.Parallel()
	live := "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: shop}\ndata: {a: " + b64std("abc") + ", b: " + b64std("true") + ", c: " + b64std("-----BEGIN KEY-----\nMIIEpAIBAAKCAQEA7\n}\n-----END KEY-----") + "}\n"
	sec := reporttest.Result(t, "s.yaml", 1, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: shop}\n", live, strings.Replace(live, b64std("abc"), b64std("abd"), 1))
	cm := quoting(t, "abc is a word, true is a word, } is a line, -----BEGIN KEY----- says what follows")
	rep := entrytest.Build(t, entry.Input{Targets: []entry.TargetInput{{Name: "t", Results: []dryrun.Result{sec, cm}}}}, entry.Options{})
	if msg := find(rep, "ConfigMap").Error; !strings.HasSuffix(msg, "abc is a word, true is a word, } is a line, -----BEGIN KEY----- says what follows") {
		t.Errorf("short values and literals were scrubbed from another object: %q", msg)
	}
	s := find(rep, "Secret")
	if s.Category != report.Modify || !strings.Contains(s.Diff, "-  a: '*** (before)'") || strings.Contains(everything(t, rep), b64std("abc")) {
		t.Errorf("the Secret's short value is not masked as a whole:\n%s", s.Diff)
	}
	if strings.Contains(everything(t, rep), "MIIEpAIBAAKCAQEA7") {
		t.Error("a line of a multi-line value reaches the output")
	}
}

// TestMaskedValuesAreScrubbedFromOtherObjects: values a drift.yaml mask rule masks, of
// any type, are scrubbed from another object's message in the same forms.
func TestMaskedValuesAreScrubbedFromOtherObjects(t *testing.T) {
	t.Parallel()
	cm := reporttest.Result(t, "app.yaml", 1, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {template: {metadata: {annotations: {key: \"line-one-of-it\\nline-two-of-it\", pin: 8675309123}}}}\n", "", "")
	cm.Merged = cm.Object.Get()
	rules := config.Rules{Mask: []config.MaskRule{{Selector: config.Selector{Kind: "Deployment"}, Paths: []string{"/spec/template/metadata/annotations"}}}}
	other := quoting(t, jsonEscaped("line-one-of-it\nline-two-of-it")+" and "+b64std("line-one-of-it\nline-two-of-it")+" and pin 8675309123 and line-two-of-it")
	rep := entrytest.Build(t, entry.Input{Targets: []entry.TargetInput{{Name: "a", Results: []dryrun.Result{cm}, Rules: rules}, {Name: "b", Results: []dryrun.Result{other}}}}, entry.Options{})
	out := everything(t, rep)
	for _, leak := range []string{"line-one-of-it", "line-two-of-it", "8675309123", b64std("line-one-of-it\nline-two-of-it")} {
		if strings.Contains(out, leak) {
			t.Errorf("masked value %q reaches the output", leak)
		}
	}
}

// TestAValueFoldedOrChangedInAnotherObjectStaysHiddenAndTheChangeShows: YAML folds a
// long value over lines; a value that changes from one secret to another is still a
// change.
func TestAValueFoldedOrChangedInAnotherObjectStaysHiddenAndTheChangeShows(t *testing.T) {
	t.Parallel()
	var words []string
	for i := 1; i <= 15; i++ {
		words = append(words, fmt.Sprintf("pass-%02d", i))
	}
	long := strings.Join(words, " ")
	sec := secretResult("s", map[string]any{"long": long, "old": "old-secret-value", "new": "new-secret-value"})
	cmYAML := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: copy, namespace: shop}\ndata: {long: \"LONG\", v: VALUE}\n"
	live := strings.ReplaceAll(strings.ReplaceAll(cmYAML, "LONG", "x"), "VALUE", "old-secret-value")
	merged := strings.ReplaceAll(strings.ReplaceAll(cmYAML, "LONG", long), "VALUE", "new-secret-value")
	cm := reporttest.Result(t, "cm.yaml", 1, merged, live, merged)
	rep := entrytest.Build(t, entry.Input{Targets: []entry.TargetInput{{Name: "t", Results: []dryrun.Result{sec, cm}}}}, entry.Options{})
	out := everything(t, rep)
	for _, w := range append(words, "old-secret-value", "new-secret-value") {
		if strings.Contains(out, w) {
			t.Errorf("%q reaches the output", w)
		}
	}
	if c := find(rep, "ConfigMap"); c.Category != report.Modify || !strings.Contains(c.Diff, "-  v: '*** (before)'") || !strings.Contains(c.Diff, "+  v: '*** (after)'") {
		t.Errorf("the change of a scrubbed value does not show:\n%s", c.Diff)
	}
}

// TestScrubbedReportsAreDeterministic: two builds of a report scrubbed of a Secret's
// values are byte-identical.
func TestScrubbedReportsAreDeterministic(t *testing.T) {
	t.Parallel()
	in := entry.Input{Targets: []entry.TargetInput{{Name: "a", Results: []dryrun.Result{secretResult("s", map[string]any{"v": "hunter2-password", "n": int64(98765432123)})}},
		{Name: "b", Results: []dryrun.Result{quoting(t, "hunter2-password 98765432123")}}}}
	var js [2]bytes.Buffer
	for i := range js {
		rep := entrytest.Build(t, in, entry.Options{})
		_ = report.WriteJSON(&js[i], rep)
	}
	if !bytes.Equal(js[0].Bytes(), js[1].Bytes()) {
		t.Fatal("two builds of the same input differ")
	}
}

// TestCredentialsHandedInAreScrubbedEvenWithShowSecrets: --show-secrets shows Secret
// values, never the run's own credentials.
func TestCredentialsHandedInAreScrubbedEvenWithShowSecrets(t *testing.T) {
	t.Parallel()
	sc := scrub.New()
	sc.AddCredential("ghp_credential0123456789")
	rep, err := entry.Build(entry.Input{Targets: []entry.TargetInput{{Name: "b", Results: []dryrun.Result{quoting(t, "token ghp_credential0123456789 in "+b64std("x-access-token:ghp_credential0123456789"))}}}},
		entry.NewBuilder(entry.Options{ShowSecrets: true}, sc))
	if err != nil {
		t.Fatal(err)
	}
	if out := everything(t, rep); strings.Contains(out, "ghp_credential") || strings.Contains(out, b64std("ghp_credential0123456789")[4:20]) {
		t.Fatalf("a credential reaches the output:\n%s", out)
	}
}

// TestAValueThatNamesAnObjectOfTheRunIsNotScrubbed: a username "shop" in namespace
// shop would otherwise turn every namespace and file name of the report into ***; the
// Secret's field is still masked, and its other values scrubbed.
func TestAValueThatNamesAnObjectOfTheRunIsNotScrubbed(t *testing.T) {
	t.Parallel()
	sec := secretResult("db", map[string]any{"username": "shop", "password": "correct-horse-9"})
	cm := reporttest.Result(t, "cm.yaml", 1, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\ndata: {a: b}\n", "", "")
	cm.Merged = cm.Object.Get()
	other := quoting(t, "user shop, password correct-horse-9")
	rep := entrytest.Build(t, entry.Input{Targets: []entry.TargetInput{{Name: "t", Results: []dryrun.Result{sec, cm, other}}}}, entry.Options{})
	c := rep.Targets[0].Objects[1]
	if c.Name != "web" || !strings.Contains(c.Diff, "+++ merged/v1.ConfigMap.shop.web") || !strings.Contains(c.Diff, "namespace: shop") {
		t.Errorf("the namespace is scrubbed:\n%s", c.Diff)
	}
	for _, o := range rep.Targets[0].Objects {
		if o.Name == "other" && !strings.HasSuffix(o.Error, "user shop, password ***") {
			t.Errorf("got %q", o.Error)
		}
	}
}
