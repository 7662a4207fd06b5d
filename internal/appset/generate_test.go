package appset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

// appSetOf is an ApplicationSet with the generators and template given as YAML.
func appSetOf(t *testing.T, spec string) map[string]any {
	t.Helper()
	var m map[string]any
	doc := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: test, namespace: argocd}\nspec:\n" + indent(spec)
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return m
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

const nameTemplate = `template:
  metadata: {name: '{{name}}'}
  spec:
    project: default
    source: {repoURL: https://example.com/repo.git, path: apps}
    destination: {server: https://kubernetes.default.svc, namespace: default}
`

// names are the generated Applications' names and provenance.
func names(res *Result) string {
	var out []string
	for _, a := range res.Applications {
		out = append(out, appName(a.Object)+"@"+a.From)
	}
	return strings.Join(out, " ")
}

func TestGenerate(t *testing.T) {
	fsys := fstest.MapFS{
		"apps/a/kustomization.yaml": {Data: []byte("resources: []\n")},
		"apps/b/kustomization.yaml": {Data: []byte("resources: []\n")},
		"envs/dev.yaml":             {Data: []byte("name: dev\n")},
	}
	clusters := []Cluster{
		{Name: "prod", Server: "https://prod.example.com", Labels: map[string]string{"env": "prod"}},
		{Name: "dev", Server: "https://dev.example.com", Labels: map[string]string{"env": "dev"}},
		{Name: "dev", Server: "https://dev2.example.com", Labels: map[string]string{"env": "dev"}},
	}
	for _, c := range []struct {
		name, spec   string
		names        string // names@from of the Applications
		skipped, err string // substrings of the one skipped reason, of the error
	}{
		{name: "list", spec: "generators:\n- list: {elements: [{name: a}, {name: b}]}\n" + nameTemplate,
			names: "a@generator 1 (list) item 1 b@generator 1 (list) item 2"},
		{name: "git directories of this repository", spec: `generators:
- git:
    repoURL: git@github.com:Example/GitOps.git
    revision: main
    directories: [{path: apps/*}]
` + strings.ReplaceAll(nameTemplate, "{{name}}", "{{path.basename}}"),
			names: "a@generator 1 (git) item 1 b@generator 1 (git) item 2"},
		{name: "git of another repository", spec: `generators:
- list: {elements: [{name: a}]}
- git: {repoURL: https://github.com/example/other.git, revision: HEAD, directories: [{path: '*'}]}
` + nameTemplate, names: "a@generator 1 (list) item 1", skipped: "generator 2 (git): reads repository https://github.com/example/other.git"},
		{name: "git of another revision", spec: `generators:
- git: {repoURL: https://github.com/example/gitops, revision: release-1, directories: [{path: '*'}]}
` + nameTemplate, skipped: "generator 1 (git): reads revision release-1"},
		{name: "clusters: one per name, the last given; in-cluster last", spec: "generators:\n- clusters: {}\n" + nameTemplate,
			names: "dev@generator 1 (clusters) item 1 prod@generator 1 (clusters) item 2 in-cluster@generator 1 (clusters) item 3"},
		{name: "clusters selected: no in-cluster", spec: "generators:\n- clusters: {selector: {matchLabels: {env: prod}}}\n" + nameTemplate,
			names: "prod@generator 1 (clusters) item 1"},
		{name: "matrix of git and clusters, the selector interpolated", spec: `generators:
- matrix:
    generators:
    - git: {repoURL: https://github.com/example/gitops, revision: HEAD, files: [{path: envs/*.yaml}]}
    - clusters: {selector: {matchLabels: {env: '{{name}}'}}}
` + strings.ReplaceAll(nameTemplate, "{{name}}", "{{path.basename}}-{{server}}"),
			names: "envs-https://dev2.example.com@generator 1 (matrix) item 1"},
		{name: "matrix keys disagreeing", spec: `generators:
- matrix:
    generators:
    - git: {repoURL: https://github.com/example/gitops, revision: HEAD, files: [{path: envs/*.yaml}]}
    - clusters: {selector: {matchLabels: {env: prod}}}
` + nameTemplate, err: "generator 1 (matrix): failed to combine string maps with merging params for the matrix generator: found duplicate key name with different value"},
		{name: "matrix of git and clusters, goTemplate", spec: `goTemplate: true
generators:
- matrix:
    generators:
    - git: {repoURL: https://github.com/example/gitops, revision: HEAD, files: [{path: envs/*.yaml}]}
    - clusters: {selector: {matchLabels: {env: '{{.name}}'}}}
` + strings.ReplaceAll(nameTemplate, "{{name}}", "{{.path.basename}}-{{.name}}"),
			names: "envs-dev@generator 1 (matrix) item 1"},
		{name: "pullRequest", spec: "generators:\n- pullRequest: {github: {owner: o, repo: r}}\n" + nameTemplate,
			skipped: "generator 1 (pullRequest): reads a pull-request API drift does not call"},
		{name: "scmProvider", spec: "generators:\n- scmProvider: {github: {organization: o}}\n" + nameTemplate,
			skipped: "generator 1 (scmProvider): reads an SCM provider's API"},
		{name: "plugin", spec: "generators:\n- plugin: {configMapRef: {name: p}}\n" + nameTemplate,
			skipped: "generator 1 (plugin): calls a plugin's service"},
		{name: "clusterDecisionResource", spec: "generators:\n- clusterDecisionResource: {configMapRef: c}\n" + nameTemplate,
			skipped: "generator 1 (clusterDecisionResource): reads a cluster's decision resources"},
		{name: "matrix child skipped skips the matrix", spec: `generators:
- matrix:
    generators:
    - list: {elements: [{name: a}]}
    - pullRequest: {github: {owner: o, repo: r}}
` + nameTemplate, skipped: "generator 1 (matrix): child 2 (pullRequest): reads a pull-request API"},
		{name: "unknown generator", spec: "generators:\n- lsit: {elements: []}\n" + nameTemplate,
			skipped: "generator 1: names no generator drift knows (lsit)"},
		{name: "matrix of three", spec: "generators:\n- matrix: {generators: [{list: {elements: []}}, {list: {elements: []}}, {list: {elements: []}}]}\n" + nameTemplate,
			err: "generator 1 (matrix): found more than two generators"},
		{name: "matrix child of two kinds", spec: "generators:\n- matrix: {generators: [{list: {elements: []}, clusters: {}}, {list: {elements: []}}]}\n" + nameTemplate,
			err: "generator 1 (matrix): child 1: found more than one generator"},
		{name: "third level of matrix", spec: `generators:
- matrix:
    generators:
    - list: {elements: [{a: x}]}
    - matrix:
        generators:
        - matrix: {generators: [{list: {elements: [{b: y}]}}, {list: {elements: [{c: z}]}}]}
        - list: {elements: [{d: w}]}
` + nameTemplate, err: "child 2 (matrix): child 1: child generator generated no parameters"},
		{name: "merge without keys", spec: "generators:\n- merge: {generators: [{list: {elements: [{name: a}]}}, {list: {elements: []}}]}\n" + nameTemplate,
			err: "no merge keys"},
		{name: "render error names the item", spec: `goTemplate: true
generators:
- list: {elements: [{name: a}, {name: b, bad: true}]}
template:
  metadata: {name: '{{ .name }}{{ if .bad }}{{ fail "no" }}{{ end }}'}
  spec: {project: default, destination: {}}
`, err: "generator 1 (list) item 2: failed to execute go template"},
		{name: "git file not YAML names the file", spec: `generators:
- git: {repoURL: https://github.com/example/gitops, revision: HEAD, files: [{path: apps/a/kustomization.yaml}, {path: bad.json}]}
` + nameTemplate, err: "generator 1 (git): file bad.json"},
		{name: "bad goTemplateOptions", spec: "goTemplate: true\ngoTemplateOptions: [missingkey=maybe]\ngenerators: []\n" + nameTemplate,
			err: "goTemplateOptions"},
		{name: "duplicate names are left out", spec: "generators:\n- list: {elements: [{name: a}, {name: b}, {name: a}]}\n" + nameTemplate,
			names: "b@generator 1 (list) item 2", skipped: `Application "a" is generated 2 times (generator 1 (list) item 1, generator 1 (list) item 3)`},
		{name: "no name", spec: "goTemplate: true\ngenerators:\n- list: {elements: [{name: a}, {name: ''}]}\n" + strings.ReplaceAll(nameTemplate, "{{name}}", "{{ .name }}"),
			names: "a@generator 1 (list) item 1", skipped: "generator 1 (list) item 2: the Application has no name"},
		{name: "revision as a full ref", spec: `generators:
- git: {repoURL: https://github.com/example/gitops, revision: refs/heads/main, directories: [{path: apps/a}]}
` + strings.ReplaceAll(nameTemplate, "{{name}}", "{{path.basename}}"), names: "a@generator 1 (git) item 1"},
		{name: "a bad selector", spec: "generators:\n- list: {elements: [{name: a}]}\n  selector: {matchLabels: {'bad key!': x}}\n" + nameTemplate,
			err: "error parsing label selector"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := fstest.MapFS{"bad.json": {Data: []byte("{not json")}}
			for k, v := range fsys {
				fs[k] = v
			}
			res, err := Generate(context.Background(), fs, Request{
				AppSet:    appSetOf(t, c.spec),
				RepoURLs:  []string{"https://github.com/example/gitops.git"},
				Revisions: []string{"main"},
				Clusters:  clusters,
			})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res); got != c.names {
				t.Errorf("applications:\n got %s\nwant %s", got, c.names)
			}
			switch {
			case c.skipped == "" && len(res.Skipped) > 0:
				t.Errorf("skipped %q", res.Skipped)
			case c.skipped != "" && (len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0], c.skipped)):
				t.Errorf("skipped %q, want one saying %q", res.Skipped, c.skipped)
			}
			if _, err := json.Marshal(res); err != nil {
				t.Errorf("the result is not JSON: %v", err)
			}
		})
	}
}

func TestMaxApplications(t *testing.T) {
	var elements []string
	for i := range 30 {
		elements = append(elements, fmt.Sprintf("{name: a%d}", i))
	}
	list := "generators:\n- list: {elements: [" + strings.Join(elements, ", ") + "]}\n"
	for _, c := range []struct {
		name, spec string
		max        int
		err        string
	}{
		{"at the limit", list + nameTemplate, 30, ""},
		{"past the limit", list + nameTemplate, 29, "list has 30 elements, more than the limit of 29"},
		{"past the limit with elementsYaml", "generators:\n- list: {elements: [{name: a}], elementsYaml: '[{name: b}, {name: c}]'}\n" + nameTemplate, 2, "list has 3 elements, more than the limit of 2"},
		{"two generators past it", list + "- list: {elements: [{name: b}]}\n" + nameTemplate, 30, "generator 2 (list): the ApplicationSet generates 31 Applications"},
		{"a matrix's product", "generators:\n- matrix:\n    generators:\n    - list: {elements: [" + strings.Join(elements, ", ") + "]}\n    - list: {elements: [{x: '1'}, {x: '2'}]}\n" + nameTemplate, 50, "the matrix yields more than the limit of 50 parameter sets"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Generate(context.Background(), fstest.MapFS{}, Request{AppSet: appSetOf(t, c.spec), MaxApplications: c.max})
			if c.err == "" {
				if err != nil || len(res.Applications) != c.max {
					t.Fatalf("%v, %d applications", err, len(res.Applications))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys := fstest.MapFS{"apps/a/x.yaml": {Data: []byte("a: b\n")}}
	for _, spec := range []string{
		"generators:\n- list: {elements: [{name: a}]}\n" + nameTemplate,
		"generators:\n- git: {repoURL: https://github.com/example/gitops, revision: HEAD, directories: [{path: '*'}]}\n" + nameTemplate,
		"generators:\n- git: {repoURL: https://github.com/example/gitops, revision: HEAD, files: [{path: '**'}]}\n" + nameTemplate,
	} {
		_, err := Generate(ctx, fsys, Request{AppSet: appSetOf(t, spec), RepoURLs: []string{"https://github.com/example/gitops"}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	}
}

func TestSameRepo(t *testing.T) {
	known := []string{"https://github.com/Example/GitOps.git"}
	for url, want := range map[string]bool{
		"https://github.com/example/gitops":          true,
		"https://github.com/example/gitops.git":      true,
		"https://github.com/example/gitops/":         true,
		"git@github.com:example/gitops.git":          true,
		"ssh://git@github.com/example/gitops":        true,
		"ssh://git@github.com:22/example/gitops.git": true,
		"https://github.com:443/example/gitops":      true,
		"https://github.com/example/gitops-other":    false,
		"https://gitlab.com/example/gitops":          false,
		"ssh://git@github.com:2222/example/gitops":   false,
		"": false,
	} {
		if got := sameRepo(url, known); got != want {
			t.Errorf("sameRepo(%q) = %v, want %v", url, got, want)
		}
	}
}
