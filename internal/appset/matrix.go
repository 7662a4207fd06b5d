package appset

import (
	"encoding/json"
	"errors"
	"fmt"

	"dario.cat/mergo"
)

// matrixParams are a matrix generator's parameter sets: for each set a of its
// first child, its second child interpolated with a, each of whose sets b gives
// one set: b then a merged over it (mergo, goTemplate), or a and b's keys, which
// must agree where both have one (without goTemplate).
func (e *expander) matrixParams(v any, level int) ([]map[string]any, error) {
	spec, err := object(v, "matrix")
	if err != nil {
		return nil, err
	}
	gens, err := children(spec, "matrix")
	if err != nil {
		return nil, err
	}
	switch {
	case len(gens) < 2:
		return nil, errors.New("found less than two generators, Matrix support only two")
	case len(gens) > 2:
		return nil, errors.New("found more than two generators, Matrix support only two")
	}
	first, err := e.child(gens[0], 0, nil, level+1)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, a := range first {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		second, err := e.child(gens[1], 1, a, level+1)
		if err != nil {
			return nil, err
		}
		if len(out)+len(second) > e.max {
			return nil, fmt.Errorf("the matrix yields "+LimitPhrase+" %d parameter sets", e.max)
		}
		for _, b := range second {
			if err := e.ctx.Err(); err != nil {
				return nil, err
			}
			if e.spec.GoTemplate {
				tmp := map[string]any{}
				if err := mergo.Merge(&tmp, b, mergo.WithOverride); err != nil {
					return nil, fmt.Errorf("failed to merge params from the second generator in the matrix generator with temp map: %w", err)
				}
				if err := mergo.Merge(&tmp, a, mergo.WithOverride); err != nil {
					return nil, fmt.Errorf("failed to merge params from the second generator in the matrix generator with the first: %w", err)
				}
				out = append(out, tmp)
				continue
			}
			val, err := combineStringMaps(a, b)
			if err != nil {
				return nil, fmt.Errorf("failed to combine string maps with merging params for the matrix generator: %w", err)
			}
			out = append(out, val)
		}
	}
	return out, nil
}

// mergeParams are a merge generator's parameter sets: its first child's, each
// with the sets of the other children that have the same values of the mergeKeys
// merged over it (mergo in goTemplate, key by key otherwise), in the first child's
// order (the controller's order is a map's).
func (e *expander) mergeParams(v any, level int) ([]map[string]any, error) {
	spec, err := object(v, "merge")
	if err != nil {
		return nil, err
	}
	gens, err := children(spec, "merge")
	if err != nil {
		return nil, err
	}
	keys, err := stringList(spec["mergeKeys"])
	if err != nil {
		return nil, fmt.Errorf("merge.mergeKeys: %w", err)
	}
	if len(gens) < 2 {
		return nil, errors.New("found less than two generators, Merge requires two or more")
	}
	sets := make([][]map[string]any, len(gens))
	for i, g := range gens {
		if sets[i], err = e.child(g, i, map[string]any{}, level+1); err != nil {
			return nil, err
		}
	}
	baseKeys, base, err := byMergeKey(keys, sets[0])
	if err != nil {
		return nil, fmt.Errorf("child 1: %w", err)
	}
	for i, other := range sets[1:] {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		_, overrides, err := byMergeKey(keys, other)
		if err != nil {
			return nil, fmt.Errorf("child %d: %w", i+2, err)
		}
		for _, k := range baseKeys {
			if err := e.ctx.Err(); err != nil {
				return nil, err
			}
			o, ok := overrides[k]
			if !ok {
				continue
			}
			b := base[k]
			if e.spec.GoTemplate {
				if err := mergo.Merge(&b, o, mergo.WithOverride); err != nil {
					return nil, fmt.Errorf("error merging base param set with override param set: %w", err)
				}
				base[k] = b
				continue
			}
			for ok, ov := range o {
				b[ok] = ov
			}
		}
	}
	out := make([]map[string]any, 0, len(baseKeys))
	for _, k := range baseKeys {
		out = append(out, base[k])
	}
	return out, nil
}

// byMergeKey indexes parameter sets by the JSON of their mergeKeys' values (top-level
// keys), in order; two sets with the same values are an error.
func byMergeKey(mergeKeys []string, sets []map[string]any) ([]string, map[string]map[string]any, error) {
	if len(mergeKeys) < 1 {
		return nil, nil, errors.New("no merge keys were specified, Merge requires at least one")
	}
	var order []string
	out := make(map[string]map[string]any, len(sets))
	for _, set := range sets {
		key := map[string]any{}
		for _, k := range mergeKeys {
			key[k] = set[k]
		}
		data, err := json.Marshal(key)
		if err != nil {
			return nil, nil, fmt.Errorf("error marshalling param set key json: %w", err)
		}
		s := string(data)
		if _, dup := out[s]; dup {
			return nil, nil, fmt.Errorf("the parameters from a generator were not unique by the given mergeKeys, Merge requires all param sets to be unique. Duplicate key was %s", s)
		}
		if set == nil {
			set = map[string]any{}
		}
		out[s] = set
		order = append(order, s)
	}
	return order, out, nil
}
