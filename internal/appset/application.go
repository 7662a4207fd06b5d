package appset

import (
	"errors"
	"fmt"
)

// resourcesFinalizer is the finalizer the controller gives a generated
// Application that has none, unless the ApplicationSet preserves resources on
// deletion.
const resourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// mergeGeneratorTemplate is the template a top-level generator's Applications are
// rendered from: the generator's own template with the ApplicationSet's filling
// what it leaves empty (mergo.Merge over the controller's typed template).
func mergeGeneratorTemplate(genSpec any, base map[string]any) (map[string]any, error) {
	var own map[string]any
	if m, ok := genSpec.(map[string]any); ok {
		if t, ok := m["template"]; ok && t != nil {
			if own, ok = t.(map[string]any); !ok {
				return nil, errors.New("template is not an object")
			}
		}
	}
	dst, err := templateShape(deepCopy(own).(map[string]any))
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	fillEmpty(dst, base)
	return dst, nil
}

// fillEmpty sets every field of dst that is missing or empty (null, "", false, 0,
// {} or []) to src's, and merges objects both have field by field; lists and a
// helm valuesObject (raw JSON to the controller) are taken whole.
func fillEmpty(dst, src map[string]any) {
	for k, sv := range src {
		dv, has := dst[k]
		if !has || isEmpty(dv) {
			if !isEmpty(sv) {
				dst[k] = deepCopy(sv)
			}
			continue
		}
		dm, dok := dv.(map[string]any)
		sm, sok := sv.(map[string]any)
		if dok && sok && k != "valuesObject" {
			fillEmpty(dm, sm)
		}
	}
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// renderApplication renders the template with one parameter set into an
// Application as the controller does: every string rendered (nothing at all for an
// empty set), the resources finalizer added when the template gives none, the
// templatePatch applied, the namespace the ApplicationSet's.
func (e *expander) renderApplication(tmpl map[string]any, params map[string]any) (map[string]any, error) {
	r := e.renderer()
	app := deepCopy(tmpl).(map[string]any)
	if len(params) != 0 {
		rendered, err := r.render(tmpl, params)
		if err != nil {
			return nil, err
		}
		app = rendered.(map[string]any)
		md := metadataOf(app)
		if fs, _ := md["finalizers"].([]any); len(fs) == 0 && !e.spec.PreserveResourcesOnDeletion {
			md["finalizers"] = []any{resourcesFinalizer}
		}
	}
	if e.spec.TemplatePatch != nil {
		patch, err := r.replace(*e.spec.TemplatePatch, params)
		if err != nil {
			return nil, fmt.Errorf("error replacing values in templatePatch: %w", err)
		}
		if app, err = applyTemplatePatch(app, patch); err != nil {
			return nil, err
		}
	}
	out := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"}
	for k, v := range app {
		out[k] = v
	}
	md := metadataOf(out)
	if e.spec.Namespace != "" {
		md["namespace"] = e.spec.Namespace
	}
	return out, nil
}

// metadataOf is obj's metadata object, made when it has none.
func metadataOf(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		obj["metadata"] = md
	}
	return md
}
