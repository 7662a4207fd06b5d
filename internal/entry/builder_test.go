package entry

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/worker"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/scrub"
)

// TestJQIsCompiledOncePerRun: the same expression in the rules of two targets is
// compiled once, and one that does not parse is an error of each object it selects.
func TestJQIsCompiledOncePerRun(t *testing.T) {
	t.Parallel()
	b := NewBuilder(Options{}, scrub.New())
	rules := func(exprs ...string) config.Rules {
		return config.Rules{Ignore: []config.IgnoreRule{{Selector: config.Selector{Kind: "ConfigMap"}, JQ: exprs}}}
	}
	a, c := b.compile(rules(".data.a", ".data[")), b.compile(rules(".data["))
	if a.ignore[0].jq[1] != c.ignore[0].jq[0] || a.ignore[0].jq[0] == a.ignore[0].jq[1] {
		t.Fatal("an expression was compiled twice, or two expressions share one compilation")
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\ndata: {a: '1'}\n"
	o := buildOne(t, reporttest.Result(t, "cm.yaml", 1, cm, cm, cm), rules(".data["))
	if o.Category != report.Error || !strings.Contains(o.Error, `: ignore rule: jq path expression ".data[" does not parse`) {
		t.Fatalf("%s %q", o.Category, o.Error)
	}
}

// TestSidesEqualAsYAMLAreUnchangedWhetherOrNotScrubbed: two sides that differ as Go
// values but not as YAML (an integer the server sent, a float the prediction holds)
// are unchanged, also when scrubbing changed them before they were rendered; a
// scrubbed value that changes is still a modification.
func TestSidesEqualAsYAMLAreUnchangedWhetherOrNotScrubbed(t *testing.T) {
	t.Parallel()
	side := func(n any, token string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "n"}, "data": map[string]any{"token": token}, "spec": map[string]any{"n": n}}}
	}
	for _, c := range []struct {
		name         string
		live, merged *unstructured.Unstructured
		scrub        string
		want, inDiff string
		notInOutput  string
	}{
		{name: "not scrubbed", live: side(int64(1000000), "plain-value"), merged: side(1e6, "plain-value"), want: report.Unchanged},
		{name: "scrubbed", live: side(int64(1000000), "token-value-1"), merged: side(1e6, "token-value-1"), scrub: "token-value-1", want: report.Unchanged, notInOutput: "token-value-1"},
		{name: "scrubbed value changes", live: side(int64(7), "token-value-1"), merged: side(int64(7), "token-value-2"), scrub: "token-value-1 token-value-2",
			want: report.Modify, inDiff: "+  token: '*** (after)'", notInOutput: "token-value-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sc := scrub.New()
			sc.AddCredential(strings.Fields(c.scrub)...)
			b := NewBuilder(Options{}, sc)
			r := dryrun.Result{ID: object.IDOf(c.live), Object: render.Object{Obj: c.merged, Source: "c.yaml", Doc: 1}, Live: c.live, Merged: c.merged}
			o, err := b.build(r, b.compile(config.Rules{}), report.SidesApply, "")
			if err != nil {
				t.Fatal(err)
			}
			if o.Category != c.want || !strings.Contains(o.Diff, c.inDiff) {
				t.Errorf("%s, want %s with %q:\n%s", o.Category, c.want, c.inDiff, o.Diff)
			}
			if c.notInOutput != "" && strings.Contains(o.FromYAML+o.ToYAML+o.Diff, c.notInOutput) {
				t.Errorf("%q reaches the output:\n%s%s", c.notInOutput, o.FromYAML, o.ToYAML)
			}
		})
	}
}

// TestUnchangedYAMLOnlyWhenAsked: an unchanged object's YAML is rendered only for
// --dump and KUBECTL_EXTERNAL_DIFF (Options.UnchangedYAML); a changed one's always.
func TestUnchangedYAMLOnlyWhenAsked(t *testing.T) {
	cm := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": map[string]any{"k": v}}}
	}
	result := func(live, merged string) dryrun.Result {
		m := cm(merged)
		return dryrun.Result{ID: object.IDOf(m), Object: render.Object{Obj: m}, Live: cm(live), Merged: m}
	}
	for _, keep := range []bool{false, true} {
		in := Input{Targets: []TargetInput{{Name: "t", Results: []dryrun.Result{result("a", "a"), result("a", "b")}}}}
		rep := build(t, in, Options{UnchangedYAML: keep})
		same, changed := rep.Targets[0].Objects[0], rep.Targets[0].Objects[1]
		if same.Category != report.Unchanged || changed.Category != report.Modify {
			t.Fatalf("categories %s, %s", same.Category, changed.Category)
		}
		if got := same.FromYAML != "" && same.ToYAML == same.FromYAML; got != keep {
			t.Errorf("UnchangedYAML %v: unchanged object's YAML %q, %q", keep, same.FromYAML, same.ToYAML)
		}
		if !strings.Contains(changed.FromYAML, "k: a") || !strings.Contains(changed.ToYAML, "k: b") {
			t.Errorf("UnchangedYAML %v: changed object's YAML %q, %q", keep, changed.FromYAML, changed.ToYAML)
		}
	}
}

// TestLearnReadsOnlySecretsAndMaskedObjects: learning a target's values decodes the
// rendered objects that hold some (a Secret, an object a mask rule masks) and leaves
// every other one as the render worker sent it.
func TestLearnReadsOnlySecretsAndMaskedObjects(t *testing.T) {
	mk := func(kind, name string, data map[string]any) dryrun.Result {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": "default"}, "data": data}}
		o, err := worker.Hold(render.Object{Obj: u, Source: name + ".yaml", Doc: 1})
		if err != nil {
			t.Fatal(err)
		}
		return dryrun.Result{ID: object.IDOf(u), Object: o}
	}
	plain := mk("ConfigMap", "plain", map[string]any{"k": "an ordinary value"})
	masked := mk("ConfigMap", "masked", map[string]any{"token": "masked-value-1234"})
	sec := mk("Secret", "sec", map[string]any{"password": "c2VjcmV0LXZhbHVlLTU2Nzg="})
	rules := config.Rules{Mask: []config.MaskRule{{Selector: config.Selector{Kind: "ConfigMap", Name: "masked"}, Paths: []string{"/data/token"}}}}
	sc := scrub.New()
	NewBuilder(Options{}, sc).Learn(TargetInput{Name: "t", Rules: rules, Results: []dryrun.Result{plain, masked, sec}}.Known())
	if plain.Object.Decoded() {
		t.Error("an unmasked ConfigMap was decoded to learn its values")
	}
	if !masked.Object.Decoded() || !sec.Object.Decoded() {
		t.Errorf("decoded: masked %v, Secret %v; both hold values to learn", masked.Object.Decoded(), sec.Object.Decoded())
	}
	if got := sc.Scrub("masked-value-1234 secret-value-5678 an ordinary value"); strings.Contains(got, "masked-value") || strings.Contains(got, "secret-value") || !strings.Contains(got, "an ordinary value") {
		t.Errorf("scrubbed: %q", got)
	}
}
