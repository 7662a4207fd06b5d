package appset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

// oracleCase is a testdata/oracle/*.case.yaml: the input the recorded
// *.want.json was generated from by argo-cd's own code (see testdata/README.md).
type oracleCase struct {
	Description        string            `json:"description"`
	AppSet             map[string]any    `json:"appSet"`
	Clusters           []Cluster         `json:"clusters"`
	Files              map[string]string `json:"files"`
	NewGitFileGlobbing bool              `json:"newGitFileGlobbing"`
}

type oracleWant struct {
	Oracle       string           `json:"oracle"`
	Applications []map[string]any `json:"applications"`
	Error        string           `json:"error"`
}

// oracleRepoURL is the repository the cases' git generators read.
const oracleRepoURL = "https://github.com/example/gitops"

// TestOracle compares Generate with what argo-cd's ApplicationSet generators and
// template rendering generated for the same input: the same Applications (as sets:
// the controller's order of clusters and merged sets is a map's), the fields the
// controller's types leave out when empty compared as absent; an error where the
// controller gave one.
func TestOracle(t *testing.T) {
	cases, err := filepath.Glob("testdata/oracle/*.case.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no oracle cases: %v", err)
	}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".case.yaml")
		t.Run(name, func(t *testing.T) {
			tc, want := readOracleCase(t, path)
			fsys := fstest.MapFS{}
			for f, content := range tc.Files {
				fsys[f] = &fstest.MapFile{Data: []byte(content)}
			}
			res, err := Generate(context.Background(), fsys, Request{
				AppSet:             tc.AppSet,
				RepoURLs:           []string{oracleRepoURL},
				Clusters:           tc.Clusters,
				NewGitFileGlobbing: tc.NewGitFileGlobbing,
			})
			if want.Error != "" {
				if err == nil {
					t.Fatalf("%s\nthe controller fails (%s); Generate gave %d Applications", tc.Description, want.Error, len(res.Applications))
				}
				t.Logf("controller: %s\ndrift: %v", want.Error, err)
				return
			}
			if err != nil {
				t.Fatalf("%s\nGenerate: %v", tc.Description, err)
			}
			if len(res.Skipped) > 0 {
				t.Fatalf("skipped: %v", res.Skipped)
			}
			var got []map[string]any
			for _, a := range res.Applications {
				got = append(got, a.Object)
			}
			g, w := canonicalApps(t, got), canonicalApps(t, want.Applications)
			if !slices.Equal(g, w) {
				t.Errorf("%s\n got: %s\nwant: %s (%s)", tc.Description, strings.Join(g, "\n      "), strings.Join(w, "\n      "), want.Oracle)
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

// canonicalApps are Applications as sorted JSON, empty fields pruned.
func canonicalApps(t *testing.T, apps []map[string]any) []string {
	t.Helper()
	out := []string{}
	for _, a := range apps {
		n, err := normalizeJSON(a)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(prune(n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	slices.Sort(out)
	return out
}

// prune leaves out of objects the fields the controller's Application type omits
// when empty: null, "", false, 0, {} and [].
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, vv := range x {
			p := prune(vv)
			if !isEmpty(p) {
				out[k] = p
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, vv := range x {
			out[i] = prune(vv)
		}
		return out
	}
	return v
}

// TestPrune makes sure the comparison can fail: a pruned difference remains one.
func TestPrune(t *testing.T) {
	a := canonicalApps(t, []map[string]any{{"spec": map[string]any{"project": "a", "x": ""}}})
	b := canonicalApps(t, []map[string]any{{"spec": map[string]any{"project": "b"}}})
	if slices.Equal(a, b) || !reflect.DeepEqual(a, []string{`{"spec":{"project":"a"}}`}) {
		t.Fatalf("prune: %v %v", a, b)
	}
}
