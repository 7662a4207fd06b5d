package appset

import (
	"errors"
	"fmt"
	"strings"
)

// appSetSpec is what Generate reads of an ApplicationSet.
type appSetSpec struct {
	Namespace         string
	GoTemplate        bool
	GoTemplateOptions []string
	Generators        []map[string]any
	// Template is spec.template: metadata (name, namespace, labels, annotations,
	// finalizers) and spec.
	Template map[string]any
	// TemplatePatch is spec.templatePatch, nil when there is none.
	TemplatePatch *string
	// PreserveResourcesOnDeletion is spec.syncPolicy.preserveResourcesOnDeletion.
	PreserveResourcesOnDeletion bool
}

// readAppSet reads the ApplicationSet's spec, normalized as JSON decodes it.
func readAppSet(obj map[string]any) (*appSetSpec, error) {
	if obj == nil {
		return nil, errors.New("no ApplicationSet given")
	}
	norm, err := normalizeJSON(obj)
	if err != nil {
		return nil, fmt.Errorf("the ApplicationSet is not JSON: %w", err)
	}
	root, _ := norm.(map[string]any)
	if k, _ := root["kind"].(string); k != "" && k != "ApplicationSet" {
		return nil, fmt.Errorf("the object is a %s, not an ApplicationSet", k)
	}
	md, _ := root["metadata"].(map[string]any)
	spec, ok := root["spec"].(map[string]any)
	if !ok {
		return nil, errors.New("the ApplicationSet has no spec")
	}
	out := &appSetSpec{}
	out.Namespace, _ = md["namespace"].(string)
	if v, ok := spec["goTemplate"]; ok && v != nil {
		if out.GoTemplate, ok = v.(bool); !ok {
			return nil, errors.New("spec.goTemplate is not a boolean")
		}
	}
	if out.GoTemplateOptions, err = stringList(spec["goTemplateOptions"]); err != nil {
		return nil, fmt.Errorf("spec.goTemplateOptions: %w", err)
	}
	for _, o := range out.GoTemplateOptions {
		if !validTemplateOption(o) {
			return nil, fmt.Errorf("spec.goTemplateOptions: %q is not a Go template option (missingkey=default, invalid, zero or error)", o)
		}
	}
	gens, ok := spec["generators"].([]any)
	if !ok && spec["generators"] != nil {
		return nil, errors.New("spec.generators is not a list")
	}
	for i, g := range gens {
		m, ok := g.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("generator %d is not an object", i+1)
		}
		out.Generators = append(out.Generators, m)
	}
	if t, ok := spec["template"]; ok && t != nil {
		if out.Template, ok = t.(map[string]any); !ok {
			return nil, errors.New("spec.template is not an object")
		}
	}
	if out.Template, err = templateShape(out.Template); err != nil {
		return nil, fmt.Errorf("spec.template: %w", err)
	}
	if p, ok := spec["templatePatch"]; ok && p != nil {
		s, ok := p.(string)
		if !ok {
			return nil, errors.New("spec.templatePatch is not a string")
		}
		out.TemplatePatch = &s
	}
	if sp, ok := spec["syncPolicy"].(map[string]any); ok {
		out.PreserveResourcesOnDeletion, _ = sp["preserveResourcesOnDeletion"].(bool)
	}
	return out, nil
}

// templateMetadataFields are the fields of an ApplicationSet template's metadata
// (ApplicationSetTemplateMeta); the controller reads no others.
var templateMetadataFields = []string{"name", "namespace", "labels", "annotations", "finalizers"}

// templateShape is a template (spec.template or a generator's) as the controller's
// ApplicationSetTemplate type holds it: metadata keeps only the fields it has.
func templateShape(t map[string]any) (map[string]any, error) {
	out := map[string]any{}
	if t == nil {
		return out, nil
	}
	if md, ok := t["metadata"]; ok && md != nil {
		m, ok := md.(map[string]any)
		if !ok {
			return nil, errors.New("metadata is not an object")
		}
		kept := map[string]any{}
		for _, f := range templateMetadataFields {
			if v, ok := m[f]; ok && v != nil {
				kept[f] = v
			}
		}
		out["metadata"] = kept
	}
	if s, ok := t["spec"]; ok && s != nil {
		m, ok := s.(map[string]any)
		if !ok {
			return nil, errors.New("spec is not an object")
		}
		out["spec"] = m
	}
	return out, nil
}

// Generator kinds in the order of the controller's ApplicationSetGenerator fields,
// which is the order it expands a generator naming more than one.
var (
	// topKinds are the kinds of a top-level generator and of a matrix or merge's
	// child (ApplicationSetGenerator, ApplicationSetNestedGenerator).
	topKinds = []string{"list", "clusters", "git", "scmProvider", "clusterDecisionResource", "pullRequest", "matrix", "merge", "plugin"}
	// terminalKinds are the kinds of a nested matrix or merge's child
	// (ApplicationSetTerminalGenerator): no third level of matrix or merge.
	terminalKinds = []string{"list", "clusters", "git", "scmProvider", "clusterDecisionResource", "pullRequest", "plugin"}
)

// kindsOf are the generator kinds gen names, among kinds.
func kindsOf(gen map[string]any, kinds []string) []string {
	var out []string
	for _, k := range kinds {
		if v, ok := gen[k]; ok && v != nil {
			out = append(out, k)
		}
	}
	return out
}

// stringList reads a list of strings.
func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, errors.New("not a list")
	}
	out := make([]string, 0, len(l))
	for i, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("item %d is not a string", i+1)
		}
		out = append(out, s)
	}
	return out, nil
}

// stringMap reads a map of strings (a generator's values).
func stringMap(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%s is not a string", k)
		}
		out[k] = s
	}
	return out, nil
}

// object reads a generator's spec (the value of its kind key).
func object(v any, what string) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", what)
	}
	return m, nil
}

// validTemplateOption says whether text/template accepts the option (it panics on
// others).
func validTemplateOption(o string) bool {
	k, v, ok := strings.Cut(o, "=")
	if !ok || k != "missingkey" {
		return false
	}
	switch v {
	case "default", "invalid", "zero", "error":
		return true
	}
	return false
}
