package risk

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/object"
)

// fixture is one case of a rule's fixture file.
type fixture struct {
	Case        string         `json:"case"`
	Category    string         `json:"category"`
	ErrorReason string         `json:"errorReason"`
	Live        map[string]any `json:"live"`
	Merged      map[string]any `json:"merged"`
	// CustomResources is what pruning counted for a CRD deleted.
	CustomResources *int64 `json:"customResources"`
}

func (f fixture) change() Change {
	obj := f.Merged
	if obj == nil {
		obj = f.Live
	}
	return Change{ID: object.IDOf(&unstructured.Unstructured{Object: obj}), Category: f.Category,
		Live: f.Live, Merged: f.Merged, ErrorReason: f.ErrorReason, CustomResources: f.CustomResources}
}

func readFixtures(t *testing.T, rule string) []fixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rule+".yaml"))
	if err != nil {
		t.Fatalf("every rule has a fixture: %v", err)
	}
	var out []fixture
	for i, doc := range strings.Split(string(data), "\n---\n") {
		var f fixture
		if err := yaml.UnmarshalStrict([]byte(doc), &f); err != nil {
			t.Fatalf("%s.yaml document %d: %v", rule, i+1, err)
		}
		out = append(out, f)
	}
	return out
}

// TestRules runs every rule's fixture through all rules (a golden per rule), checks
// that the rule fires on it, and that switched off it does not.
func TestRules(t *testing.T) {
	for _, r := range Rules() {
		t.Run(r.Name, func(t *testing.T) {
			var out bytes.Buffer
			fired := false
			for _, f := range readFixtures(t, r.Name) {
				fmt.Fprintf(&out, "%s (%s %s):\n", f.Case, f.Category, f.change().ID.Display())
				found := Evaluate(f.change(), nil)
				if len(found) == 0 {
					fmt.Fprintf(&out, "  (no risk)\n")
				}
				for _, x := range found {
					fmt.Fprintf(&out, "  %s: %s\n", x.Rule, x.Message)
					fired = fired || x.Rule == r.Name
				}
				for _, x := range Evaluate(f.change(), map[string]bool{r.Name: true}) {
					if x.Rule == r.Name {
						t.Errorf("%s: rule %s fired while switched off", f.Case, r.Name)
					}
				}
			}
			if !fired {
				t.Errorf("rule %s never fires on its own fixture", r.Name)
			}
			golden.Check(t, r.Name+".golden", out.Bytes())
		})
	}
}

func TestCheckNamesUnknownRules(t *testing.T) {
	if err := Check([]string{"pod-rollout", "secret-changed"}); err != nil {
		t.Fatal(err)
	}
	err := Check([]string{"pod-rolout"})
	if err == nil || !strings.Contains(err.Error(), `"pod-rolout"`) || !strings.Contains(err.Error(), "pod-rollout") {
		t.Fatalf("want an error naming the rule and the known ones, got %v", err)
	}
}

func TestSplitImage(t *testing.T) {
	for ref, want := range map[string][3]string{
		"web":                       {"web", "", ""},
		"web:1.4":                   {"web", "1.4", ""},
		"localhost:5000/web":        {"localhost:5000/web", "", ""},
		"localhost:5000/web:2":      {"localhost:5000/web", "2", ""},
		"web@sha256:ab":             {"web", "", "sha256:ab"},
		"ghcr.io/a/web:1@sha256:ab": {"ghcr.io/a/web", "1", "sha256:ab"},
	} {
		repo, tag, digest := splitImage(ref)
		if got := [3]string{repo, tag, digest}; got != want {
			t.Errorf("splitImage(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestRulesAreDocumented: docs/report.md has a row for every rule, and drift.yaml's
// schema lists every rule as a value of risks.disable.
func TestRulesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := os.ReadFile(filepath.Join("..", "..", "docs", "drift.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(doc), "| `"+r.Name+"` |") {
			t.Errorf("docs/report.md has no row for rule %s", r.Name)
		}
		if !strings.Contains(string(schema), `"`+r.Name+`"`) {
			t.Errorf("docs/drift.schema.json does not list rule %s", r.Name)
		}
	}
}
