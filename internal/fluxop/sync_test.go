package fluxop

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// decode is a YAML document as drift decodes objects.
func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// instance is a FluxInstance with the given spec (YAML, indented two spaces).
func instance(t *testing.T, namespace, spec string) map[string]any {
	t.Helper()
	doc := "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n"
	if namespace != "" {
		doc += "  namespace: " + namespace + "\n"
	}
	return decode(t, doc+"spec:\n"+spec)
}

// jsonAt is the JSON of the value at a dotted path of an object.
func jsonAt(t *testing.T, obj map[string]any, path string) string {
	t.Helper()
	data, err := json.Marshal(field(obj, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSyncObjects(t *testing.T) {
	const dist = "  distribution:\n    version: \"2.x\"\n    registry: ghcr.io/fluxcd\n"
	tests := []struct {
		name      string
		namespace string
		spec      string
		opts      SyncOptions
		// want maps "source.<path>" / "kustomization.<path>" to the JSON there.
		want map[string]string
	}{{
		name: "git defaults",
		spec: dist + "  sync:\n    kind: GitRepository\n    url: https://github.com/example/fleet\n    ref: refs/heads/main\n    path: clusters/prod\n",
		want: map[string]string{
			"source.apiVersion":         `"source.toolkit.fluxcd.io/v1"`,
			"source.kind":               `"GitRepository"`,
			"source.metadata.name":      `"flux-system"`,
			"source.metadata.namespace": `"flux-system"`,
			"source.spec":               `{"interval":"1m0s","ref":{"name":"refs/heads/main"},"url":"https://github.com/example/fleet"}`,
			"source.metadata.labels.app\\.kubernetes\\.io/version": `null`,
			"kustomization.apiVersion":                             `"kustomize.toolkit.fluxcd.io/v1"`,
			"kustomization.metadata.name":                          `"flux-system"`,
			"kustomization.spec":                                   `{"interval":"10m0s","path":"clusters/prod","prune":true,"sourceRef":{"kind":"GitRepository","name":"flux-system"}}`,
		},
	}, {
		name:      "name and namespace",
		namespace: "gitops",
		spec:      dist + "  sync:\n    name: fleet\n    kind: GitRepository\n    url: ssh://git@github.com/example/fleet\n    ref: refs/tags/v1.2.3\n    path: ./\n    interval: 1h\n    pullSecret: auth\n    provider: github\n",
		want: map[string]string{
			"source.metadata.name":                                   `"fleet"`,
			"source.metadata.namespace":                              `"gitops"`,
			"source.spec":                                            `{"interval":"1h0m0s","provider":"github","ref":{"name":"refs/tags/v1.2.3"},"secretRef":{"name":"auth"},"url":"ssh://git@github.com/example/fleet"}`,
			"kustomization.metadata.namespace":                       `"gitops"`,
			"kustomization.spec.sourceRef":                           `{"kind":"GitRepository","name":"fleet"}`,
			"kustomization.metadata.labels":                          `{"app.kubernetes.io/instance":"gitops","app.kubernetes.io/managed-by":"flux-operator","app.kubernetes.io/part-of":"flux","fluxcd.controlplane.io/name":"flux","fluxcd.controlplane.io/namespace":"gitops"}`,
			"kustomization.metadata.annotations":                     `{"kustomize.toolkit.fluxcd.io/prune":"Disabled","kustomize.toolkit.fluxcd.io/ssa":"Ignore"}`,
			"kustomization.spec.serviceAccountName":                  `null`,
			"kustomization.spec.path":                                `"./"`,
			"source.metadata.labels.fluxcd\\.controlplane\\.io/name": `"flux"`,
		},
	}, {
		name: "git ref is always ref.name: a branch, a tag, a commit-like string",
		spec: dist + "  sync:\n    kind: GitRepository\n    url: https://example.com/r\n    ref: 0a1b2c3d4e5f60718293a4b5c6d7e8f901234567\n    path: p\n",
		want: map[string]string{"source.spec.ref": `{"name":"0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"}`},
	}, {
		name: "oci ref is always ref.tag, a semver-looking one too",
		spec: dist + "  sync:\n    kind: OCIRepository\n    url: oci://ghcr.io/example/fleet\n    ref: v1.2.3\n    path: p\n",
		want: map[string]string{
			"source.apiVersion": `"source.toolkit.fluxcd.io/v1"`,
			"source.spec.ref":   `{"tag":"v1.2.3"}`,
			"source.spec.url":   `"oci://ghcr.io/example/fleet"`,
		},
	}, {
		name: "oci before Flux 2.6 is v1beta2, the exact version labelled",
		spec: "  distribution:\n    version: 2.5.1\n    registry: ghcr.io/fluxcd\n  sync:\n    kind: OCIRepository\n    url: oci://ghcr.io/example/fleet\n    ref: latest\n    path: p\n",
		want: map[string]string{
			"source.apiVersion": `"source.toolkit.fluxcd.io/v1beta2"`,
			"source.metadata.labels.app\\.kubernetes\\.io/version": `"v2.5.1"`,
		},
	}, {
		name: "oci on a range below 2.6 is v1beta2",
		spec: "  distribution:\n    version: \"2.4.x\"\n    registry: ghcr.io/fluxcd\n  sync:\n    kind: OCIRepository\n    url: oci://ghcr.io/example/fleet\n    ref: latest\n    path: p\n",
		want: map[string]string{"source.apiVersion": `"source.toolkit.fluxcd.io/v1beta2"`},
	}, {
		name: "the caller's Flux version labels and decides",
		spec: "  distribution:\n    version: \">=2.0.0\"\n    registry: ghcr.io/fluxcd\n  sync:\n    kind: Bucket\n    url: minio.example.com\n    ref: fleet\n    path: p\n",
		opts: SyncOptions{FluxVersion: "2.5.3"},
		want: map[string]string{
			"source.apiVersion": `"source.toolkit.fluxcd.io/v1beta2"`,
			"source.spec":       `{"bucketName":"fleet","endpoint":"minio.example.com","interval":"1m0s"}`,
			"source.metadata.labels.app\\.kubernetes\\.io/version": `"v2.5.3"`,
		},
	}, {
		name: "bucket",
		spec: dist + "  sync:\n    kind: Bucket\n    url: storage.googleapis.com\n    ref: fleet\n    path: p\n    provider: gcp\n    pullSecret: s\n",
		want: map[string]string{
			"source.apiVersion":            `"source.toolkit.fluxcd.io/v1"`,
			"source.spec":                  `{"bucketName":"fleet","endpoint":"storage.googleapis.com","interval":"1m0s","provider":"gcp","secretRef":{"name":"s"}}`,
			"kustomization.spec.sourceRef": `{"kind":"Bucket","name":"flux-system"}`,
		},
	}, {
		name: "multitenant, commonMetadata, patches",
		spec: dist + `  cluster:
    multitenant: true
  commonMetadata:
    labels: {team: a}
  kustomize:
    patches:
      - target: {kind: Kustomization, name: flux-system}
        patch: |
          - op: add
            path: /spec/wait
            value: true
      - patch: |
          apiVersion: apps/v1
          kind: Deployment
          metadata:
            name: helm-controller
          spec:
            replicas: 2
  sync:
    kind: GitRepository
    url: https://example.com/r
    ref: refs/heads/main
    path: p
`,
		want: map[string]string{
			"kustomization.spec.serviceAccountName": `"kustomize-controller"`,
			"kustomization.spec.wait":               `true`,
			"source.spec.wait":                      `null`,
			"source.metadata.labels.team":           `"a"`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := SyncObjectsWith(instance(t, tt.namespace, tt.spec), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 2 {
				t.Fatalf("want 2 objects, got %d", len(objs))
			}
			for path, want := range tt.want {
				which, rest, _ := strings.Cut(path, ".")
				obj := objs[0]
				if which == "kustomization" {
					obj = objs[1]
				}
				if got := jsonAtEscaped(t, obj, rest); got != want {
					t.Errorf("%s = %s, want %s", path, got, want)
				}
			}
		})
	}
}

// jsonAtEscaped is jsonAt where a path's "\." is a dot inside a key.
func jsonAtEscaped(t *testing.T, obj map[string]any, path string) string {
	t.Helper()
	var cur any = obj
	for _, key := range splitEscaped(path) {
		m, _ := cur.(map[string]any)
		cur = m[key]
	}
	data, err := json.Marshal(cur)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func splitEscaped(path string) []string {
	parts := strings.Split(strings.ReplaceAll(path, `\.`, "\x00"), ".")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "\x00", ".")
	}
	return parts
}

func TestSyncObjectsNoSync(t *testing.T) {
	objs, err := SyncObjects(instance(t, "flux-system", "  distribution:\n    version: \"2.x\"\n    registry: ghcr.io/fluxcd\n"))
	if err != nil || objs != nil {
		t.Fatalf("want nil, nil; got %v, %v", objs, err)
	}
}

func TestSyncObjectsErrors(t *testing.T) {
	const dist = "  distribution:\n    version: \"2.x\"\n    registry: ghcr.io/fluxcd\n"
	sync := func(fields string) string { return dist + "  sync:\n" + fields }
	const full = "    kind: GitRepository\n    url: https://example.com/r\n    ref: refs/heads/main\n    path: p\n"
	tests := []struct{ name, spec, want string }{
		{"no kind", sync("    url: u\n    ref: r\n    path: p\n"), "spec.sync.kind is required"},
		{"bad kind", sync("    kind: HelmRepository\n    url: u\n    ref: r\n    path: p\n"), `spec.sync.kind "HelmRepository"`},
		{"no url", sync("    kind: GitRepository\n    ref: r\n    path: p\n"), "spec.sync.url is required"},
		{"no ref", sync("    kind: GitRepository\n    url: u\n    path: p\n"), "spec.sync.ref is required"},
		{"no path", sync("    kind: GitRepository\n    url: u\n    ref: r\n"), "spec.sync.path is required"},
		{"bad interval", sync(full + "    interval: often\n"), "spec.sync.interval"},
		{"ref not a string", sync("    kind: GitRepository\n    url: u\n    ref: 1.5\n    path: p\n"), "spec.sync.ref: want a string"},
		{"bad provider", sync(full + "    provider: vault\n"), `spec.sync.provider "vault"`},
		{"gcp for git", sync(full + "    provider: gcp\n"), "'gcp' is only supported for OCIRepository and Bucket"},
		{"github for oci", sync("    kind: OCIRepository\n    url: oci://x/y\n    ref: latest\n    path: p\n    provider: github\n"), "'github' is only supported for GitRepository"},
		{"aws for git before 2.9", "  distribution:\n    version: 2.7.0\n    registry: r\n  sync:\n" + full + "    provider: aws\n", "requires Flux version >= 2.9.0"},
		{"no distribution version", "  sync:\n" + full, "spec.distribution.version is required"},
		{"bad distribution version", "  distribution:\n    version: two\n  sync:\n" + full, `spec.distribution.version "two"`},
		{"a ref YAML cannot read unquoted", sync("    kind: OCIRepository\n    url: oci://x/y\n    ref: \">=1.0.0\"\n    path: p\n"), "MalformedYAMLError"},
		{"json patch without target", dist + "  kustomize:\n    patches:\n      - patch: |\n          - op: add\n            path: /spec/x\n            value: 1\n  sync:\n" + full, "kustomize build of the sync objects"},
		{"namespaced untargeted patch of a controller", dist + "  kustomize:\n    patches:\n      - patch: |\n          apiVersion: apps/v1\n          kind: Deployment\n          metadata:\n            name: helm-controller\n            namespace: flux-system\n  sync:\n" + full, "spec.kustomize.patches[0]: no resource matches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SyncObjects(instance(t, "flux-system", tt.spec))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "FluxInstance flux-system/flux: ") {
				t.Fatalf("want an error naming the FluxInstance and containing %q, got %v", tt.want, err)
			}
		})
	}
	if _, err := SyncObjects(decode(t, "kind: Kustomization\nmetadata: {name: x}\n")); err == nil {
		t.Error("a Kustomization is not a FluxInstance")
	}
	// aws for a GitRepository is fine when the version is not known.
	if _, err := SyncObjects(instance(t, "", sync(full+"    provider: aws\n"))); err != nil {
		t.Errorf("aws on 2.x: %v", err)
	}
}
