package fluxop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

const (
	groupVersion    = "fluxcd.controlplane.io/v1"
	providerKind    = "ResourceSetInputProvider"
	staticProvider  = "Static"
	strategyFlatten = "Flatten"
	strategyPermute = "Permute"
)

// skipError is an input drift cannot read: the ResourceSet is skipped, not failed.
type skipError struct{ reason string }

func (s *skipError) Error() string { return s.reason }

// inlineInputs is a ResourceSet's spec.inputs as a source.
func inlineInputs(rs map[string]any, name, namespace string) (*inputSource, error) {
	raw, err := listField(rs, "spec.inputs")
	if err != nil {
		return nil, err
	}
	src := &inputSource{apiVersion: groupVersion, kind: "ResourceSet", name: name, namespace: namespace}
	for i, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.inputs[%d]: want an object, not %T", i, item)
		}
		in, err := decodeInput(m)
		if err != nil {
			return nil, fmt.Errorf("failed to unmarshal inputs[%d]: %w", i, err)
		}
		src.inputs = append(src.inputs, in)
	}
	return src, nil
}

// providerSources are the ResourceSetInputProviders spec.inputsFrom selects
// among providers (by name, or by label selector, in the ResourceSet's
// namespace; a provider naming no namespace is taken to be in it), sorted by
// namespace and name as the operator sorts them, each with the input set a
// Static provider exports: its spec.defaultValues and an id. A provider named
// but not given, or of a type other than Static, is a skipError.
func providerSources(ctx context.Context, rs map[string]any, namespace string, providers []map[string]any) ([]*inputSource, error) {
	refs, err := listField(rs, "spec.inputsFrom")
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	type key struct{ namespace, name string }
	inNamespace := map[key]map[string]any{}
	var candidates []key
	for _, p := range providers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if kind, _ := p["kind"].(string); kind != providerKind {
			continue
		}
		ns := cmp.Or(metaString(p, "namespace"), namespace)
		if ns != namespace {
			continue
		}
		k := key{ns, metaString(p, "name")}
		if _, dup := inNamespace[k]; !dup {
			candidates = append(candidates, k)
		}
		inNamespace[k] = p
	}
	selected := map[key]bool{}
	for i, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, ok := ref.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.inputsFrom[%d]: want an object, not %T", i, ref)
		}
		name, _ := r["name"].(string)
		switch {
		case name != "":
			k := key{namespace, name}
			if _, ok := inNamespace[k]; !ok {
				return nil, &skipError{fmt.Sprintf("its input provider %s %s/%s is not in the repository", providerKind, namespace, name)}
			}
			selected[k] = true
		case r["selector"] != nil:
			sel, err := labelSelector(r["selector"])
			if err != nil {
				return nil, fmt.Errorf("spec.inputsFrom[%d]: failed to parse selector: %w", i, err)
			}
			for _, k := range candidates {
				if sel.Matches(labels.Set(metaStringMap(inNamespace[k], "labels"))) {
					selected[k] = true
				}
			}
		default:
			return nil, errors.New("input provider reference must have either name or selector set")
		}
	}
	keys := make([]key, 0, len(selected))
	for k := range selected {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	var out []*inputSource
	for _, k := range keys {
		src, err := staticInputs(inNamespace[k], k.namespace, k.name)
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, nil
}

// labelSelector is a metav1.LabelSelector decoded from its YAML form.
func labelSelector(v any) (labels.Selector, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var ls metav1.LabelSelector
	if err := json.Unmarshal(data, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

// staticInputs is the one input set a Static ResourceSetInputProvider exports:
// its spec.defaultValues with id set to the id of its name. (In a cluster the
// id is that of the provider's UID, which is not known before it is created;
// the operator's own offline build, flux-operator build resourceset
// --inputs-from-provider, uses the name as here.) Any other type is a skipError.
func staticInputs(p map[string]any, namespace, name string) (*inputSource, error) {
	typ, _ := field(p, "spec.type").(string)
	if typ != staticProvider {
		return nil, &skipError{fmt.Sprintf("its inputs come from %s %s/%s of type %s, which drift cannot read (only Static providers are expanded)", providerKind, namespace, name, typ)}
	}
	defaults, err := mapField(p, "spec.defaultValues")
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", providerKind, namespace, name, err)
	}
	vals := make(map[string]any, len(defaults)+1)
	for k, v := range defaults {
		vals[k] = v
	}
	vals["id"] = inputID(name)
	in, err := decodeInput(vals)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", providerKind, namespace, name, err)
	}
	return &inputSource{apiVersion: groupVersion, kind: providerKind, name: name, namespace: namespace, inputs: []map[string]any{in}}, nil
}

// combineInputs is the ResourceSet's input sets under its spec.inputStrategy:
// its own inputs first, then its providers'.
func combineInputs(ctx context.Context, rs map[string]any, own *inputSource, providers []*inputSource) ([]map[string]any, error) {
	sources := append([]*inputSource{own}, providers...)
	strategy, err := stringField(rs, "spec.inputStrategy.name")
	if err != nil {
		return nil, err
	}
	switch strategy {
	case "", strategyFlatten:
		return flatten(sources), nil
	case strategyPermute:
		includeEmpty, err := boolField(rs, "spec.inputStrategy.includeEmptyProviders")
		if err != nil {
			return nil, err
		}
		return permute(ctx, sources, includeEmpty)
	default:
		return nil, fmt.Errorf("unknown input strategy: '%s'", strategy)
	}
}
