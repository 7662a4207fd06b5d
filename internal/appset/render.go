package appset

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/valyala/fasttemplate"
)

// renderer renders strings with one parameter set as the controller's
// utils.Render does: Go templates (goTemplate) or fasttemplate.
type renderer struct {
	goTemplate bool
	options    []string
}

// isTemplated is the controller's test for a string fasttemplate renders.
var isTemplated = regexp.MustCompile(".*{{.*}}.*")

// replace renders one string (utils.Render.Replace).
func (r renderer) replace(tmpl string, params map[string]any) (string, error) {
	return r.replaceWith(tmpl, params, r.options)
}

func (r renderer) replaceWith(tmpl string, params map[string]any, options []string) (string, error) {
	if r.goTemplate {
		// A string without an action renders as itself: not parsing it saves
		// cloning the function map for every string of every Application.
		if !strings.Contains(tmpl, "{{") {
			return tmpl, nil
		}
		t, err := baseTemplate.Clone()
		if err != nil {
			return "", fmt.Errorf("failed to clone base template: %w", err)
		}
		for _, o := range options {
			t = t.Option(o)
		}
		parsed, err := t.Parse(tmpl)
		if err != nil {
			return "", fmt.Errorf("failed to parse template %s: %w", tmpl, err)
		}
		var b bytes.Buffer
		if err := parsed.Execute(&b, params); err != nil {
			return "", fmt.Errorf("failed to execute go template %s: %w", tmpl, err)
		}
		return b.String(), nil
	}
	if !isTemplated.MatchString(tmpl) {
		return tmpl, nil
	}
	t, err := fasttemplate.NewTemplate(tmpl, "{{", "}}")
	if err != nil {
		return "", fmt.Errorf("invalid template: %w", err)
	}
	// A tag whose parameter is not a string is left as written, as the controller does.
	return t.ExecuteFuncString(func(w io.Writer, tag string) (int, error) {
		trimmed := strings.TrimSpace(tag)
		v, ok := params[trimmed].(string)
		if trimmed == "" || !ok {
			return fmt.Fprintf(w, "{{%s}}", tag)
		}
		return w.Write([]byte(v))
	}), nil
}

// render renders every string of a JSON value, map keys included, as the
// controller's deeplyReplace does: null map entries are left out, null list items
// kept, other values copied.
func (r renderer) render(v any, params map[string]any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			if vv == nil {
				continue
			}
			nv, err := r.render(vv, params)
			if err != nil {
				return nil, err
			}
			nk, err := r.replace(k, params)
			if err != nil {
				return nil, err
			}
			out[nk] = nv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, vv := range x {
			nv, err := r.render(vv, params)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case string:
		return r.replace(x, params)
	}
	return v, nil
}

// valuesKinds are the generator kinds with a values field (map[string]string):
// when a matrix interpolates its second child with the first's parameters, a value
// naming a parameter the first does not have is kept as written, for the child's
// own parameters to fill.
var valuesKinds = map[string]bool{"clusters": true, "git": true, "scmProvider": true, "clusterDecisionResource": true, "pullRequest": true, "plugin": true}

// interpolateGenerator renders a matrix's second child with the first child's
// parameters (utils.Render.RenderGeneratorParams): every string, but values
// resolved with missingkey=error and kept as written where a key is missing.
func (r renderer) interpolateGenerator(gen map[string]any, params map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(gen))
	for k, v := range gen {
		if v == nil {
			continue
		}
		spec, isObj := v.(map[string]any)
		var nv any
		var err error
		switch {
		case isObj && valuesKinds[k]:
			nv, err = r.interpolateValuesKind(spec, params)
		case isObj && (k == "matrix" || k == "merge"):
			nv, err = r.interpolateNested(spec, params)
		default:
			nv, err = r.render(v, params)
		}
		if err != nil {
			return nil, err
		}
		out[k] = nv
	}
	return out, nil
}

// interpolateValuesKind renders a generator spec that has values.
func (r renderer) interpolateValuesKind(spec map[string]any, params map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		if v == nil {
			continue
		}
		if k != "values" {
			nv, err := r.render(v, params)
			if err != nil {
				return nil, err
			}
			nk, err := r.replace(k, params)
			if err != nil {
				return nil, err
			}
			out[nk] = nv
			continue
		}
		values, err := stringMap(v)
		if err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
		options := r.options
		if r.goTemplate {
			options = nil
			for _, o := range r.options {
				if !strings.HasPrefix(o, "missingkey=") {
					options = append(options, o)
				}
			}
			options = append(options, "missingkey=error")
		}
		resolved := make(map[string]any, len(values))
		for vk, vv := range values {
			s, err := r.replaceWith(vv, params, options)
			if err != nil {
				if isMissingKeyError(err) {
					resolved[vk] = vv
					continue
				}
				return nil, fmt.Errorf("failed to pre-resolve Values key %q: %w", vk, err)
			}
			resolved[vk] = s
		}
		out[k] = resolved
	}
	return out, nil
}

// interpolateNested renders a nested matrix or merge: its children are generators.
func (r renderer) interpolateNested(spec map[string]any, params map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		if v == nil {
			continue
		}
		children, isList := v.([]any)
		if k != "generators" || !isList {
			nv, err := r.render(v, params)
			if err != nil {
				return nil, err
			}
			nk, err := r.replace(k, params)
			if err != nil {
				return nil, err
			}
			out[nk] = nv
			continue
		}
		list := make([]any, len(children))
		for i, c := range children {
			cm, ok := c.(map[string]any)
			if !ok {
				nv, err := r.render(c, params)
				if err != nil {
					return nil, err
				}
				list[i] = nv
				continue
			}
			nc, err := r.interpolateGenerator(cm, params)
			if err != nil {
				return nil, err
			}
			list[i] = nc
		}
		out[k] = list
	}
	return out, nil
}

func isMissingKeyError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "map has no entry for key") || strings.Contains(msg, "can't evaluate field")
}
