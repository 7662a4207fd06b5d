package fluxop

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// rset is a ResourceSet apps/<name> with the given spec (YAML, indented two spaces).
func rset(t *testing.T, name, spec string) map[string]any {
	t.Helper()
	return decode(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata:\n  name: "+name+"\n  namespace: apps\nspec:\n"+spec)
}

// provider is a ResourceSetInputProvider apps/<name> of a type.
func provider(t *testing.T, name, typ, rest string) map[string]any {
	t.Helper()
	return decode(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata:\n  name: "+name+"\n  namespace: apps\nspec:\n  type: "+typ+"\n"+rest)
}

// names are the objects' kind/name in order.
func names(objs []map[string]any) string {
	var out []string
	for _, o := range objs {
		out = append(out, o["kind"].(string)+"/"+metaString(o, "name"))
	}
	return strings.Join(out, " ")
}

const cmTemplate = `  resources:
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: cm-<< inputs.app >>
        namespace: apps
`

func TestExpandResourceSet(t *testing.T) {
	tests := []struct {
		name      string
		spec      string
		providers []map[string]any
		want      string
	}{{
		name: "inputs",
		spec: "  inputs:\n    - app: a\n    - app: b\n" + cmTemplate,
		want: "ConfigMap/cm-a ConfigMap/cm-b",
	}, {
		name: "duplicates made once",
		spec: "  inputs:\n    - app: a\n    - app: a\n" + cmTemplate,
		want: "ConfigMap/cm-a",
	}, {
		name: "permutations",
		spec: `  inputStrategy:
    name: Permute
  inputs:
    - x: "1"
    - x: "2"
  inputsFrom:
    - name: p
  resources:
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: cm-<< inputs.perm.x >>-<< inputs.p.zone >>
        namespace: apps
`,
		providers: []map[string]any{provider(t, "p", "Static", "  defaultValues:\n    zone: z\n")},
		want:      "ConfigMap/cm-1-z ConfigMap/cm-2-z",
	}, {
		name: "dependsOn does not gate the rendering and rendered dependsOn is kept",
		spec: `  dependsOn:
    - apiVersion: v1
      kind: Namespace
      name: not-in-this-preview
      ready: true
  inputs:
    - app: a
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: ks-<< inputs.app >>
        namespace: apps
      spec:
        dependsOn:
          - name: infra-<< inputs.app >>
`,
		want: "Kustomization/ks-a",
	}, {
		name: "a Static provider by name, flattened after the in-line inputs",
		spec: "  inputs:\n    - app: a\n  inputsFrom:\n    - name: p\n" + cmTemplate,
		providers: []map[string]any{
			provider(t, "p", "Static", "  defaultValues:\n    app: from-p\n"),
			provider(t, "q", "GitHubPullRequest", "  url: https://github.com/example/app\n"),
		},
		want: "ConfigMap/cm-a ConfigMap/cm-from-p",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, skipped, err := ExpandResourceSet(context.Background(), rset(t, "perm", tt.spec), tt.providers, 0)
			if err != nil || skipped != "" {
				t.Fatalf("err %v, skipped %q", err, skipped)
			}
			if got := names(objs); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			for _, o := range objs {
				if l := metaStringMap(o, "labels"); l[ResourceSetNameLabel] != "perm" || l[ResourceSetNamespaceLabel] != "apps" {
					t.Errorf("%s: owner labels %v", names([]map[string]any{o}), l)
				}
			}
		})
	}
	t.Run("rendered dependsOn kept", func(t *testing.T) {
		objs, _, err := ExpandResourceSet(context.Background(), rset(t, "perm", tests[3].spec), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonAt(t, objs[0], "spec.dependsOn"); got != `[{"name":"infra-a"}]` {
			t.Errorf("spec.dependsOn = %s", got)
		}
	})
}

func TestExpandResourceSetSkipped(t *testing.T) {
	tests := []struct {
		name      string
		rs        map[string]any
		providers []map[string]any
		want      string
	}{{
		name:      "a provider drift cannot read",
		rs:        rset(t, "prs", "  inputsFrom:\n    - name: prs\n"+cmTemplate),
		providers: []map[string]any{provider(t, "prs", "GitHubPullRequest", "  url: https://github.com/example/app\n")},
		want:      "of type GitHubPullRequest, which drift cannot read",
	}, {
		name: "a selected provider drift cannot read",
		rs:   rset(t, "tags", "  inputsFrom:\n    - selector:\n        matchLabels: {app: x}\n"+cmTemplate),
		providers: []map[string]any{
			provider(t, "static", "Static", ""),
			decode(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata:\n  name: tags\n  namespace: apps\n  labels: {app: x}\nspec:\n  type: OCIArtifactTag\n  url: oci://ghcr.io/x/y\n"),
		},
		want: "of type OCIArtifactTag",
	}, {
		name:      "a provider not in the repository",
		rs:        rset(t, "gone", "  inputsFrom:\n    - name: elsewhere\n"+cmTemplate),
		providers: []map[string]any{decode(t, "kind: ResourceSetInputProvider\nmetadata:\n  name: elsewhere\n  namespace: other\nspec:\n  type: Static\n")},
		want:      "ResourceSetInputProvider apps/elsewhere is not in the repository",
	}, {
		name: "reconciliation disabled",
		rs:   decode(t, "kind: ResourceSet\nmetadata:\n  name: paused\n  namespace: apps\n  annotations:\n    fluxcd.controlplane.io/reconcile: Disabled\nspec:\n"+cmTemplate),
		want: "the operator does not reconcile it",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, skipped, err := ExpandResourceSet(context.Background(), tt.rs, tt.providers, 0)
			if err != nil || objs != nil || !strings.Contains(skipped, tt.want) {
				t.Fatalf("want skipped %q; got %d objects, skipped %q, err %v", tt.want, len(objs), skipped, err)
			}
		})
	}
}

func TestExpandResourceSetErrors(t *testing.T) {
	tests := []struct {
		name string
		rs   map[string]any
		want string
	}{{
		name: "a template that fails names the input set",
		rs: rset(t, "apps", `  inputs:
    - app: a
    - app: b
    - other: c
`+cmTemplate),
		want: `ResourceSet apps/apps: input set 3: resources[0]: failed to execute template: template: resourceset:4:14: executing "resourceset" at <inputs>: map has no entry for key "app"`,
	}, {
		name: "a template that does not parse",
		rs:   rset(t, "apps", "  inputs:\n    - app: a\n  resourcesTemplate: \"<< if >>\"\n"),
		want: "ResourceSet apps/apps: input set 1: resourcesTemplate: failed to parse multi-doc YAML template",
	}, {
		name: "a resources entry that is not an object",
		rs:   rset(t, "apps", "  resources:\n    - just a string\n"),
		want: "ResourceSet apps/apps: resources[0]: want an object, not string",
	}, {
		name: "steps with resources",
		rs:   rset(t, "apps", "  steps:\n    - name: a\n      resources:\n        - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"+cmTemplate),
		want: "spec.steps is mutually exclusive",
	}, {
		name: "a step with nothing",
		rs:   rset(t, "apps", "  steps:\n    - name: empty\n"),
		want: `step "empty": at least one of resources or resourcesTemplate must be set`,
	}, {
		name: "an unknown strategy",
		rs:   rset(t, "apps", "  inputStrategy: {name: Zip}\n  inputs: [{app: a}]\n"+cmTemplate),
		want: "unknown input strategy: 'Zip'",
	}, {
		name: "an input provider reference naming nothing",
		rs:   rset(t, "apps", "  inputsFrom:\n    - kind: ResourceSetInputProvider\n"+cmTemplate),
		want: "input provider reference must have either name or selector set",
	}, {
		name: "no namespace",
		rs:   decode(t, "kind: ResourceSet\nmetadata: {name: x}\nspec:\n"+cmTemplate),
		want: "ResourceSet x: no metadata.namespace",
	}, {
		name: "a template writing without end",
		rs:   rset(t, "apps", "  resourcesTemplate: |\n    << range until 1000000 >>xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx<< end >>\n"),
		want: "output longer than",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ExpandResourceSet(context.Background(), tt.rs, nil, 0)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error containing %q, got %v", tt.want, err)
			}
		})
	}
}

func TestExpandResourceSetMaxObjects(t *testing.T) {
	rs := rset(t, "many", "  inputs:\n    - app: a\n    - app: b\n    - app: c\n"+cmTemplate)
	objs, _, err := ExpandResourceSet(context.Background(), rs, nil, 3)
	if err != nil || len(objs) != 3 {
		t.Fatalf("3 objects within a limit of 3: %d, %v", len(objs), err)
	}
	_, _, err = ExpandResourceSet(context.Background(), rs, nil, 2)
	if err == nil || !strings.Contains(err.Error(), LimitPhrase) || !strings.HasPrefix(err.Error(), "ResourceSet apps/many: ") {
		t.Fatalf("want a limit error naming the ResourceSet, got %v", err)
	}
}

func TestExpandResourceSetPermutationLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("  inputStrategy: {name: Permute}\n  inputsFrom:\n    - selector: {matchLabels: {p: x}}\n  inputs:\n")
	for i := 0; i < 101; i++ {
		b.WriteString("    - app: a\n")
	}
	b.WriteString("  resources:\n    - {apiVersion: v1, kind: ConfigMap, metadata: {name: \"cm-<< inputs.id >>\", namespace: apps}}\n")
	var providers []map[string]any
	for _, name := range []string{"p1", "p2"} {
		providers = append(providers, decode(t, "kind: ResourceSetInputProvider\nmetadata:\n  name: "+name+"\n  namespace: apps\n  labels: {p: x}\nspec:\n  type: Static\n"))
	}
	// 101 × 1 × 1 is within the operator's 10,000; 101 in-line × 100 is not.
	if _, _, err := ExpandResourceSet(context.Background(), rset(t, "perm", b.String()), providers, 0); err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(b.String(), "  inputs:\n", "  inputs:\n"+strings.Repeat("    - app: a\n", 9900), 1)
	_, _, err := ExpandResourceSet(context.Background(), rset(t, "perm", spec), providers, 0)
	if err == nil || !strings.Contains(err.Error(), "would exceed the maximum allowed permutations. max: 10000") {
		t.Fatalf("want the permutation limit, got %v", err)
	}
}

func TestExpandResourceSetCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := ExpandResourceSet(ctx, rset(t, "c", "  inputs:\n    - app: a\n"+cmTemplate), nil, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"  Hello World  ":               "hello-world",
		"Ünïcödé & Friends @ Home":      "unicode-and-friends-at-home",
		"__a--b__":                      "a-b",
		strings.Repeat("word-", 20):     strings.Repeat("word-", 11) + "word",
		strings.Repeat("x", 63) + "-yz": strings.Repeat("x", 63),
		strings.Repeat("x", 70):         strings.Repeat("x", 63),
	} {
		if got := slugify(in); got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeKey(t *testing.T) {
	for in, want := range map[string]string{
		"My-RSet": "my_rset", "oci.tag": "oci_tag", "  a  b ": "a_b", "日本": "", "x--y": "x_y",
	} {
		if got := normalizeKey(in); got != want {
			t.Errorf("normalizeKey(%q) = %q, want %q", in, got, want)
		}
	}
}
