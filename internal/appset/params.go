package appset

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Parameter sets are map[string]any of the Go types the controller builds them
// with (map[string]string for cluster labels and for values in goTemplate,
// []string for path segments), so that text/template and mergo treat them as the
// controller's do.

// flatten is a nested object's keys joined with '.' (list indexes as numbers), as
// jeremywohl/flatten's DotStyle does: only map[string]any and []any are walked,
// every other value is a leaf; empty objects and lists give no key.
func flatten(in map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any, top bool)
	walk = func(prefix string, v any, top bool) {
		key := func(k string) string {
			if top {
				return prefix + k
			}
			return prefix + "." + k
		}
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				leaf(out, key(k), vv, walk)
			}
		case []any:
			for i, vv := range x {
				leaf(out, key(strconv.Itoa(i)), vv, walk)
			}
		}
	}
	walk("", in, true)
	return out
}

func leaf(out map[string]any, k string, v any, walk func(string, any, bool)) {
	switch v.(type) {
	case map[string]any, []any:
		walk(k, v, false)
	default:
		out[k] = v
	}
}

// flattenParameters is the controller's flattening of a parameter set for a
// generator's selector: map[string]string maps are walked too, values printed with
// %v.
func flattenParameters(in map[string]any) map[string]string {
	flat := flatten(normalizeForFlatten(in))
	out := make(map[string]string, len(flat))
	for k, v := range flat {
		out[k] = fmt.Sprintf("%v", v)
	}
	return out
}

// normalizeForFlatten turns map[string]string values (cluster labels, values) into
// map[string]any, in objects only, as the controller's normalizeMapForFlatten does.
func normalizeForFlatten(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case map[string]string:
			m := make(map[string]any, len(x))
			for ik, iv := range x {
				m[ik] = iv
			}
			out[k] = m
		case map[string]any:
			out[k] = normalizeForFlatten(x)
		default:
			out[k] = v
		}
	}
	return out
}

// toStringMap prints every value with %v (utils.ConvertToMapStringString).
func toStringMap(in map[string]any) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = fmt.Sprintf("%v", v)
	}
	return out
}

// combineStringMaps is a matrix's product of two flat parameter sets
// (utils.CombineStringMaps): a key both have with different values is an error.
func combineStringMaps(a, b map[string]any) (map[string]any, error) {
	res := map[string]any{}
	for k, v := range toStringMap(a) {
		res[k] = v
	}
	for k, v := range toStringMap(b) {
		if cur, ok := res[k]; ok && cur != v {
			return nil, fmt.Errorf("found duplicate key %s with different value, a: %s ,b: %s", k, cur, v)
		}
		res[k] = v
	}
	return res, nil
}

// appendValues adds a generator's values to a parameter set, each rendered with
// the set (appendTemplatedValues): params["values"] as a map[string]string in
// goTemplate, "values.<key>" otherwise.
func (r renderer) appendValues(values map[string]string, params map[string]any) error {
	tmp := map[string]any{}
	for k, v := range values {
		s, err := r.replace(v, params)
		if err != nil {
			return fmt.Errorf("failed to replace templated string: %w", err)
		}
		if r.goTemplate {
			if tmp["values"] == nil {
				tmp["values"] = map[string]string{}
			}
			tmp["values"].(map[string]string)[k] = s
		} else {
			tmp["values."+k] = s
		}
	}
	for k, v := range tmp {
		params[k] = v
	}
	return nil
}

// pathParams are a git generator item's path parameters: dir is the directory
// (for a file, the file's directory), file the file or "".
func pathParams(params map[string]any, dir, file, prefix string, goTemplate bool) {
	if goTemplate {
		p := map[string]any{
			"path":               dir,
			"basename":           path.Base(dir),
			"basenameNormalized": sanitizeName(path.Base(dir)),
			"segments":           strings.Split(dir, "/"),
		}
		if file != "" {
			p["filename"] = path.Base(file)
			p["filenameNormalized"] = sanitizeName(path.Base(file))
		}
		if prefix != "" {
			params[prefix] = map[string]any{"path": p}
		} else {
			params["path"] = p
		}
		return
	}
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	params[name] = dir
	params[name+".basename"] = path.Base(dir)
	params[name+".basenameNormalized"] = sanitizeName(path.Base(dir))
	if file != "" {
		params[name+".filename"] = path.Base(file)
		params[name+".filenameNormalized"] = sanitizeName(path.Base(file))
	}
	for i, seg := range strings.Split(dir, "/") {
		if seg != "" {
			params[name+"["+strconv.Itoa(i)+"]"] = seg
		}
	}
}

// deepCopy copies a JSON value's maps and lists.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			out[k] = deepCopy(vv)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, vv := range x {
			out[i] = deepCopy(vv)
		}
		return out
	}
	return v
}
