package appset

import (
	"encoding/json"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// listParams are a list generator's parameter sets: its elements (as written in
// goTemplate; without it every value must be a string, and values.<key> flattened
// from a values object), then the objects of its elementsYaml, as written in
// either mode (as the controller does).
func (e *expander) listParams(v any) ([]map[string]any, error) {
	m, err := object(v, "list")
	if err != nil {
		return nil, err
	}
	var elements []any
	if x, ok := m["elements"]; ok && x != nil {
		if elements, ok = x.([]any); !ok {
			return nil, errors.New("list.elements is not a list")
		}
	}
	if len(elements) > e.max {
		return nil, fmt.Errorf("list has %d elements, "+LimitPhrase+" %d", len(elements), e.max)
	}
	out := make([]map[string]any, len(elements))
	for i, el := range elements {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		if el == nil {
			continue // an element null is an empty parameter set
		}
		element, ok := el.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("element %d is not an object", i+1)
		}
		if e.spec.GoTemplate {
			out[i] = deepCopy(element).(map[string]any) // a fresh set, as the controller decodes one per call
			continue
		}
		params, err := flatElement(element)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i+1, err)
		}
		out[i] = params
	}
	if x, ok := m["elementsYaml"]; ok && x != nil {
		s, ok := x.(string)
		if !ok {
			return nil, errors.New("list.elementsYaml is not a string")
		}
		if s != "" {
			var more []map[string]any
			if err := yaml.Unmarshal([]byte(s), &more); err != nil {
				return nil, fmt.Errorf("error unmarshling decoded ElementsYaml %w", err)
			}
			if len(out)+len(more) > e.max {
				return nil, fmt.Errorf("list has %d elements, "+LimitPhrase+" %d", len(out)+len(more), e.max)
			}
			out = append(out, more...)
		}
	}
	return out, nil
}

// flatElement is a list element's parameters without goTemplate: every value a
// string, a values object's as values.<key>. An empty element has none (nil).
func flatElement(element map[string]any) (map[string]any, error) {
	var params map[string]any
	for key, value := range element {
		if params == nil {
			params = map[string]any{}
		}
		if key == "values" {
			values, ok := value.(map[string]any)
			if !ok {
				return nil, errors.New("error parsing values map")
			}
			for k, v := range values {
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("values.%s is not a string (without goTemplate every value must be)", k)
				}
				params["values."+k] = s
			}
			continue
		}
		s, ok := value.(string)
		if !ok {
			return nil, fmt.Errorf("%s is not a string (without goTemplate every value must be)", key)
		}
		params[key] = s
	}
	return params, nil
}

// decodeInto decodes a JSON object into a typed value.
func decodeInto(m map[string]any, into any) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
