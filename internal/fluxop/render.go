package fluxop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// reconcileAnnotation set to disabledValue on a rendered object leaves it out;
// on the ResourceSet itself it stops the operator reconciling it.
const (
	reconcileAnnotation = "fluxcd.controlplane.io/reconcile"
	disabledValue       = "disabled"
)

// step is a group of templates the operator applies together: a spec.steps
// entry, or the anonymous step of a ResourceSet without steps.
type step struct {
	name      string
	resources []any
	template  string
}

// renderer renders a ResourceSet's templates, counting the objects it keeps
// against max.
type renderer struct {
	ctx   context.Context
	max   int
	count int
}

// renderSteps renders each step's templates for every input set; an object
// made by two steps is an error, as in the operator.
func (r *renderer) renderSteps(steps []step, inputs []map[string]any) ([]*unstructured.Unstructured, error) {
	var all []*unstructured.Unstructured
	stepOf := map[string]string{}
	for _, st := range steps {
		objs, err := r.renderStep(st, inputs)
		if err != nil {
			if st.name != "" {
				return nil, fmt.Errorf("step %q: %w", st.name, err)
			}
			return nil, err
		}
		for _, obj := range objs {
			key := objectKey(obj)
			if prev, found := stepOf[key]; found {
				if prev == st.name {
					continue
				}
				return nil, fmt.Errorf("duplicate resource %s in step %q, already defined in step %q",
					ssautil.FmtUnstructured(obj), st.name, prev)
			}
			stepOf[key] = st.name
		}
		all = append(all, objs...)
	}
	return all, nil
}

// renderStep renders a step as the operator's BuildResourceSet does: each
// resources entry for every input set, then the resourcesTemplate for every
// input set; objects annotated fluxcd.controlplane.io/reconcile: disabled are
// left out and an object already made is not made again (resources win over
// the template). Without input sets each template renders once, inputs a nil
// map (any key missing), and resources entries are neither excluded nor
// deduplicated.
func (r *renderer) renderStep(st step, inputs []map[string]any) ([]*unstructured.Unstructured, error) {
	var objects []*unstructured.Unstructured
	seen := map[string]bool{}
	add := func(obj *unstructured.Unstructured, dedup bool) error {
		key := objectKey(obj)
		if dedup && seen[key] {
			return nil
		}
		seen[key] = true
		objects = append(objects, obj)
		r.count++
		if r.count > r.max {
			return fmt.Errorf("%s %d objects", LimitPhrase, r.max)
		}
		return nil
	}
	for i, res := range st.resources {
		text, err := resourceTemplate(res)
		if err != nil {
			return nil, fmt.Errorf("resources[%d]: %w", i, err)
		}
		if len(inputs) == 0 {
			obj, err := r.renderResource(text, nil)
			if err != nil {
				return nil, fmt.Errorf("resources[%d]: failed to build resource: %w", i, err)
			}
			if err := add(obj, false); err != nil {
				return nil, err
			}
			continue
		}
		for n, in := range inputs {
			obj, err := r.renderResource(text, in)
			if err != nil {
				return nil, fmt.Errorf("input set %d: resources[%d]: %w", n+1, i, err)
			}
			if disabled(obj) {
				continue
			}
			if err := add(obj, true); err != nil {
				return nil, err
			}
		}
	}
	if st.template == "" {
		return objects, nil
	}
	sets := inputs
	if len(sets) == 0 {
		sets = []map[string]any{nil}
	}
	for n, in := range sets {
		objs, err := r.renderTemplate(st.template, in)
		if err != nil {
			if in == nil {
				return nil, fmt.Errorf("resourcesTemplate: %w", err)
			}
			return nil, fmt.Errorf("input set %d: resourcesTemplate: %w", n+1, err)
		}
		for _, obj := range objs {
			if disabled(obj) {
				continue
			}
			if err := add(obj, true); err != nil {
				return nil, err
			}
		}
	}
	return objects, nil
}

// resourceTemplate is a spec.resources entry as the template text the operator
// renders: its JSON (keys sorted, as the API server stores it) turned to YAML.
func resourceTemplate(res any) (string, error) {
	if _, ok := res.(map[string]any); !ok {
		return "", fmt.Errorf("want an object, not %T", res)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return "", err
	}
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return "", fmt.Errorf("failed to convert template to YAML: %w", err)
	}
	return string(y), nil
}

// renderResource renders one resources entry for an input set into one object.
func (r *renderer) renderResource(text string, in map[string]any) (*unstructured.Unstructured, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	out, err := execute(r.ctx, "template", text, in)
	if err != nil {
		return nil, err
	}
	obj, err := ssautil.ReadObject(strings.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("failed to read object: %w", err)
	}
	return obj, nil
}

// renderTemplate renders the resourcesTemplate for an input set into the
// objects of its YAML documents (documents that are not Kubernetes objects
// dropped, Lists unpacked, as the operator reads them).
func (r *renderer) renderTemplate(text string, in map[string]any) ([]*unstructured.Unstructured, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	out, err := execute(r.ctx, "multi-doc YAML template", text, in)
	if err != nil {
		return nil, err
	}
	objs, err := ssautil.ReadObjects(strings.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("failed to read objects from multi-doc YAML: %w", err)
	}
	return objs, nil
}

// disabled says whether a rendered object opts out of being applied.
func disabled(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[reconcileAnnotation] == disabledValue
}

// objectKey is an object's identity for deduplication: group, kind, namespace
// and name (not the version).
func objectKey(obj *unstructured.Unstructured) string {
	return strings.Join([]string{obj.GroupVersionKind().Group, obj.GetKind(), obj.GetNamespace(), obj.GetName()}, "/")
}
