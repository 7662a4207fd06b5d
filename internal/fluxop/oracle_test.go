package fluxop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// oracleCase is a testdata/oracle/*.case.yaml: the input the recorded
// *.want.json was made from by flux-operator's own code (see testdata/README.md).
type oracleCase struct {
	Description  string           `json:"description"`
	FluxInstance map[string]any   `json:"fluxInstance"`
	ResourceSet  map[string]any   `json:"resourceSet"`
	Providers    []map[string]any `json:"providers"`
}

// oracleWant is a testdata/oracle/*.want.json.
type oracleWant struct {
	Oracle      string           `json:"oracle"`
	FluxVersion string           `json:"fluxVersion"`
	Objects     []map[string]any `json:"objects"`
	Error       string           `json:"error"`
}

// TestOracle compares SyncObjects and ExpandResourceSet with what flux-operator's
// builder made for the same input: the same sync objects (as a set: the
// operator sorts them its own way), the same ResourceSet objects in the same
// order, and an error where the operator gave one. A FluxInstance whose
// distribution.version is a range is given the version the oracle matched it
// to, as a caller that knows it would; one naming a version is given nothing.
func TestOracle(t *testing.T) {
	cases, err := filepath.Glob("testdata/oracle/*.case.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no oracle cases: %v", err)
	}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".case.yaml")
		t.Run(name, func(t *testing.T) {
			tc, want := readOracleCase(t, path)
			var got []map[string]any
			var err error
			ordered := false
			switch {
			case tc.FluxInstance != nil:
				opts := SyncOptions{}
				if v, _ := field(tc.FluxInstance, "spec.distribution.version").(string); !exactVersion.MatchString(v) {
					opts.FluxVersion = want.FluxVersion
				}
				got, err = SyncObjectsWith(tc.FluxInstance, opts)
			case tc.ResourceSet != nil:
				ordered = true
				var skipped string
				got, skipped, err = ExpandResourceSet(context.Background(), tc.ResourceSet, tc.Providers, 0)
				if skipped != "" {
					t.Fatalf("skipped: %s", skipped)
				}
			default:
				t.Fatal("neither fluxInstance nor resourceSet")
			}
			if want.Error != "" {
				if err == nil {
					t.Fatalf("%s\nthe operator fails (%s); drift made %d objects", tc.Description, want.Error, len(got))
				}
				t.Logf("operator: %s\ndrift: %v", want.Error, err)
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.Description, err)
			}
			g, w := canonical(t, got, ordered), canonical(t, want.Objects, ordered)
			if !slices.Equal(g, w) {
				t.Errorf("%s\n got: %s\nwant: %s\n(%s)", tc.Description, strings.Join(g, "\n      "), strings.Join(w, "\n      "), want.Oracle)
			}
		})
	}
}

func readOracleCase(t *testing.T, path string) (*oracleCase, *oracleWant) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tc oracleCase
	if err := yaml.UnmarshalStrict(data, &tc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err = os.ReadFile(strings.TrimSuffix(path, ".case.yaml") + ".want.json")
	if err != nil {
		t.Fatalf("no recorded output: %v", err)
	}
	var want oracleWant
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	return &tc, &want
}

// canonical is objects as JSON (keys sorted, numbers as JSON has them), sorted
// unless ordered.
func canonical(t *testing.T, objs []map[string]any, ordered bool) []string {
	t.Helper()
	out := []string{}
	for _, o := range objs {
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	if !ordered {
		slices.Sort(out)
	}
	return out
}

// TestCanonicalDiffers makes sure the comparison can fail: a changed value, a
// missing object and a changed order are differences.
func TestCanonicalDiffers(t *testing.T) {
	a := []map[string]any{{"kind": "A", "spec": map[string]any{"x": int64(1)}}, {"kind": "B"}}
	for _, b := range [][]map[string]any{
		{{"kind": "A", "spec": map[string]any{"x": int64(2)}}, {"kind": "B"}},
		{{"kind": "A", "spec": map[string]any{"x": int64(1)}}},
	} {
		if slices.Equal(canonical(t, a, false), canonical(t, b, false)) {
			t.Errorf("%v and %v compare equal", a, b)
		}
	}
	swapped := []map[string]any{a[1], a[0]}
	if slices.Equal(canonical(t, a, true), canonical(t, swapped, true)) {
		t.Error("a changed order compares equal when ordered")
	}
	if !slices.Equal(canonical(t, a, false), canonical(t, swapped, false)) {
		t.Error("a changed order differs when unordered")
	}
}
