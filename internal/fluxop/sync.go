package fluxop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	kustomizeapi "github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/kustomize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// syncManifests is the YAML the operator writes for the sync objects before its
// kustomize build. The values go in unquoted, as the operator writes them, so
// that YAML reads them as it does (a ref of 1.0 is a number there too).
func syncManifests(s *instanceSync, namespace, sourceAPI string) string {
	var b strings.Builder
	apiVersion := sourceAPI
	if s.kind == "GitRepository" {
		apiVersion = "source.toolkit.fluxcd.io/v1"
	}
	fmt.Fprintf(&b, "---\napiVersion: %s\nkind: %s\n", apiVersion, s.kind)
	fmt.Fprintf(&b, "metadata:\n  name: %s\n  namespace: %s\n", s.name, namespace)
	fmt.Fprintf(&b, "spec:\n  interval: %s\n", s.interval)
	switch s.kind {
	case "GitRepository":
		fmt.Fprintf(&b, "  ref:\n    name: %s\n", s.ref)
	case "OCIRepository":
		fmt.Fprintf(&b, "  ref:\n    tag: %s\n", s.ref)
	case "Bucket":
		fmt.Fprintf(&b, "  bucketName: %s\n", s.ref)
	}
	if s.pullSecret != "" {
		fmt.Fprintf(&b, "  secretRef:\n    name: %s\n", s.pullSecret)
	}
	if s.provider != "" {
		fmt.Fprintf(&b, "  provider: %s\n", s.provider)
	}
	if s.kind == "Bucket" {
		fmt.Fprintf(&b, "  endpoint: %s\n", s.url)
	} else {
		fmt.Fprintf(&b, "  url: %s\n", s.url)
	}
	b.WriteString("---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n")
	fmt.Fprintf(&b, "metadata:\n  name: %s\n  namespace: %s\n", s.name, namespace)
	fmt.Fprintf(&b, "spec:\n  interval: %s\n  path: %s\n  prune: true\n", syncKustomizationInterval, s.path)
	fmt.Fprintf(&b, "  sourceRef:\n    kind: %s\n    name: %s\n", s.kind, s.name)
	return b.String()
}

// multitenantPatch is the multitenant profile's patch that reaches the sync
// objects: the Kustomization reconciles as kustomize-controller.
var multitenantPatch = kustomizeapi.Patch{
	Target: &kustomizeapi.Selector{Kind: "Kustomization"},
	Patch:  "- op: add\n  path: /spec/serviceAccountName\n  value: kustomize-controller\n",
}

// buildSync runs the operator's kustomize stage over the sync objects — its
// namespace, its patches (the multitenant profile's, then spec.kustomize.patches),
// its annotations (kustomize.toolkit.fluxcd.io/ssa: Ignore, prune: Disabled) and
// labels (app.kubernetes.io managed-by, instance, version, part-of) — then sets
// the owner labels and spec.commonMetadata as the controller does before it
// applies.
func buildSync(instance map[string]any, namespace, version, sourceAPI string, s *instanceSync) ([]map[string]any, error) {
	var patches []kustomizeapi.Patch
	multitenant, err := boolField(instance, "spec.cluster.multitenant")
	if err != nil {
		return nil, err
	}
	if multitenant {
		patches = append(patches, multitenantPatch)
	}
	user, err := instancePatches(instance)
	if err != nil {
		return nil, err
	}
	patches = append(patches, user...)

	labels := map[string]string{
		"app.kubernetes.io/managed-by": "flux-operator",
		"app.kubernetes.io/instance":   namespace,
		"app.kubernetes.io/part-of":    "flux",
	}
	if version != "" {
		labels["app.kubernetes.io/version"] = version
	}
	kustomization := map[string]any{
		"apiVersion":   "kustomize.config.k8s.io/v1beta1",
		"kind":         "Kustomization",
		"namespace":    namespace,
		"transformers": []string{"annotations.yaml", "labels.yaml"},
		"resources":    []string{"sync.yaml"},
		"patches":      patches,
	}
	files := map[string]any{
		"kustomization.yaml": kustomization,
		"annotations.yaml": map[string]any{
			"apiVersion": "builtin",
			"kind":       "AnnotationsTransformer",
			"metadata":   map[string]any{"name": "annotations"},
			"annotations": map[string]string{
				"kustomize.toolkit.fluxcd.io/ssa":   "Ignore",
				"kustomize.toolkit.fluxcd.io/prune": "Disabled",
			},
			"fieldSpecs": []any{map[string]any{"path": "metadata/annotations", "create": true}},
		},
		"labels.yaml": map[string]any{
			"apiVersion": "builtin",
			"kind":       "LabelTransformer",
			"metadata":   map[string]any{"name": "labels"},
			"labels":     labels,
			"fieldSpecs": []any{map[string]any{"path": "metadata/labels", "create": true}},
		},
	}
	fs := filesys.MakeFsInMemory()
	for name, content := range files {
		data, err := yaml.Marshal(content)
		if err != nil {
			return nil, err
		}
		if err := fs.WriteFile("/sync/"+name, data); err != nil {
			return nil, err
		}
	}
	if err := fs.WriteFile("/sync/sync.yaml", []byte(syncManifests(s, namespace, sourceAPI))); err != nil {
		return nil, err
	}
	res, err := kustomize.Build(fs, "/sync")
	if err != nil {
		return nil, fmt.Errorf("kustomize build of the sync objects: %w", err)
	}
	data, err := res.AsYaml()
	if err != nil {
		return nil, err
	}
	objects, err := ssautil.ReadObjects(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}

	name := metaString(instance, "name")
	setLabels(objects, map[string]string{OwnerNameLabel: name, OwnerNamespaceLabel: namespace})
	if err := setCommonMetadata(instance, objects); err != nil {
		return nil, err
	}
	return syncOrder(objects), nil
}

// instancePatches are spec.kustomize.patches as the operator decodes them, less
// the strategic merge patches without a target that name an object of a kind
// the sync objects are not (they patch the Flux controllers' Deployments and
// the like, which drift does not build; kustomize would refuse them here). Such
// a patch naming a namespace is an error, as in the operator: its Flux
// manifests carry no namespace when the patches run, so nothing matches it.
func instancePatches(instance map[string]any) ([]kustomizeapi.Patch, error) {
	raw, err := listField(instance, "spec.kustomize.patches")
	if err != nil || raw == nil {
		return nil, err
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var patches []kustomizeapi.Patch
	if err := json.Unmarshal(data, &patches); err != nil {
		return nil, fmt.Errorf("spec.kustomize.patches: %w", err)
	}
	var kept []kustomizeapi.Patch
	for i, p := range patches {
		if p.Target == nil || *p.Target == (kustomizeapi.Selector{}) {
			var body map[string]any
			if yaml.Unmarshal([]byte(p.Patch), &body) == nil && body != nil {
				if kind, ok := body["kind"].(string); ok && !isSyncKind(kind) {
					if ns := metaString(body, "namespace"); ns != "" {
						return nil, fmt.Errorf("spec.kustomize.patches[%d]: no resource matches strategic merge patch %s %s/%s (the operator's Flux manifests have no namespace when patches run)",
							i, kind, ns, metaString(body, "name"))
					}
					continue
				}
			}
		}
		kept = append(kept, p)
	}
	return kept, nil
}

// isSyncKind says whether a kind is one the sync objects can be.
func isSyncKind(kind string) bool {
	switch kind {
	case "GitRepository", "OCIRepository", "Bucket", "Kustomization":
		return true
	}
	return false
}

// setLabels sets labels on every object, as the operator's resource manager
// sets its owner labels.
func setLabels(objects []*unstructured.Unstructured, labels map[string]string) {
	for _, obj := range objects {
		l := obj.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		for k, v := range labels {
			l[k] = v
		}
		obj.SetLabels(l)
	}
}

// setCommonMetadata applies an owner's spec.commonMetadata labels and
// annotations to every object, overriding keys already set.
func setCommonMetadata(owner map[string]any, objects []*unstructured.Unstructured) error {
	cm, err := mapField(owner, "spec.commonMetadata")
	if err != nil || cm == nil {
		return err
	}
	labels, err := stringMapField(owner, "spec.commonMetadata.labels")
	if err != nil {
		return err
	}
	annotations, err := stringMapField(owner, "spec.commonMetadata.annotations")
	if err != nil {
		return err
	}
	ssautil.SetCommonMetadata(objects, labels, annotations)
	return nil
}

// syncOrder puts the source first and the Kustomization last, keeping anything
// else the patches made in between, as plain maps.
func syncOrder(objects []*unstructured.Unstructured) []map[string]any {
	var first, middle, last []map[string]any
	for _, obj := range objects {
		switch {
		case obj.GroupVersionKind().Group == "source.toolkit.fluxcd.io":
			first = append(first, obj.Object)
		case obj.GetKind() == "Kustomization" && obj.GroupVersionKind().Group == "kustomize.toolkit.fluxcd.io":
			last = append(last, obj.Object)
		default:
			middle = append(middle, obj.Object)
		}
	}
	return append(append(first, middle...), last...)
}
