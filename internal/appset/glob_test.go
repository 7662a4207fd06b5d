package appset

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

// TestPathspecOracle compares the git files generator's matching with what
// argo-cd's git client (git ls-files) listed for the same files and patterns,
// recorded in testdata/oracle/pathspec.want.json.
func TestPathspecOracle(t *testing.T) {
	data, err := os.ReadFile("testdata/oracle/pathspec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Files    []string `json:"files"`
		Patterns []string `json:"patterns"`
	}
	if err := yaml.UnmarshalStrict(data, &in); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile("testdata/oracle/pathspec.want.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Oracle, Git string
		Results     []struct {
			Pattern string
			Files   []string
			Error   bool
		}
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Results) != len(in.Patterns) {
		t.Fatalf("%d patterns, %d recorded: record them again", len(in.Patterns), len(want.Results))
	}
	fsys := fstest.MapFS{}
	for _, f := range in.Files {
		fsys[f] = &fstest.MapFile{Data: []byte("{}\n")}
	}
	e := &expander{ctx: context.Background(), fsys: fsys}
	for _, r := range want.Results {
		got, err := e.matchFiles(r.Pattern)
		if r.Error {
			if err == nil {
				t.Errorf("%q: git fails, got %v", r.Pattern, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", r.Pattern, err)
			continue
		}
		slices.Sort(got)
		if got == nil {
			got = []string{}
		}
		if !slices.Equal(got, r.Files) {
			t.Errorf("%q (%s):\n got %q\nwant %q", r.Pattern, want.Git, got, r.Files)
		}
	}
}

func TestPathspecRefused(t *testing.T) {
	for _, p := range []string{":(glob)**/x", ":!x", "/etc/passwd", "../other/x", "a/../../x"} {
		if _, err := parsePathspec(p); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
}

func TestDoublestarFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"c/config.yaml":     {},
		"c/a/config.yaml":   {},
		"c/a/b/config.yaml": {},
		".hidden/x.yaml":    {},
		".git/config":       {},
	}
	e := &expander{ctx: context.Background(), fsys: fsys, req: Request{NewGitFileGlobbing: true}}
	for pattern, want := range map[string][]string{
		"c/**/config.yaml": {"c/a/b/config.yaml", "c/a/config.yaml", "c/config.yaml"},
		"c/*/config.yaml":  {"c/a/config.yaml"},
		"**/x.yaml":        {".hidden/x.yaml"},
		"**/config":        nil,
		"../c/*":           nil,
		"./c/config.yaml":  {"c/config.yaml"},
		"c/a":              {"c/a"}, // a directory matches, then fails to read
	} {
		got, err := e.matchFiles(pattern)
		if err != nil {
			t.Fatalf("%q: %v", pattern, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", pattern, got, want)
		}
	}
}

func TestWildmatch(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		want          bool
	}{
		{"a*b", "a/x/b", true},
		{"a**b", "ab", true},
		{"a/**/b", "a/b", false},
		{"a?c", "a/c", true},
		{"[!a]", "b", true},
		{"[^a]", "a", false},
		{"[a-c]x", "bx", true},
		{"[[:digit:]]", "7", true},
		{"[[:nope:]]", "7", false},
		{"[", "[", false},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{"[]]", "]", true},
		{"*.json", ".json", true},
	} {
		if got := wildmatch(c.pattern, c.text); got != c.want {
			t.Errorf("wildmatch(%q, %q) = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
}
