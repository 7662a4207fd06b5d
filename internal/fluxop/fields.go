package fluxop

import (
	"fmt"
	"strings"
)

// objectName names an object in errors: "FluxInstance flux-system/flux".
func objectName(kind string, obj map[string]any) string {
	ns, name := metaString(obj, "namespace"), metaString(obj, "name")
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

// metaString is metadata.<key> when it is a string, else "".
func metaString(obj map[string]any, key string) string {
	meta, _ := obj["metadata"].(map[string]any)
	s, _ := meta[key].(string)
	return s
}

// metaStringMap is metadata.<key> (labels, annotations) as strings; values that
// are not strings are left out.
func metaStringMap(obj map[string]any, key string) map[string]string {
	meta, _ := obj["metadata"].(map[string]any)
	m, _ := meta[key].(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// field is the value at a dotted path of maps ("spec.sync.url"), nil when absent.
func field(obj map[string]any, path string) any {
	var cur any = obj
	for _, key := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[key]
	}
	return cur
}

// stringField is the string at path: "" when absent or null, an error when it is
// something else (the operator's typed decoding refuses it too).
func stringField(obj map[string]any, path string) (string, error) {
	switch v := field(obj, path).(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s: want a string, not %T", path, v)
	}
}

// mapField is the object at path: nil when absent or null, an error when it is
// something else.
func mapField(obj map[string]any, path string) (map[string]any, error) {
	switch v := field(obj, path).(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("%s: want an object, not %T", path, v)
	}
}

// listField is the list at path: nil when absent or null, an error when it is
// something else.
func listField(obj map[string]any, path string) ([]any, error) {
	switch v := field(obj, path).(type) {
	case nil:
		return nil, nil
	case []any:
		return v, nil
	default:
		return nil, fmt.Errorf("%s: want a list, not %T", path, v)
	}
}

// boolField is the bool at path: false when absent or null, an error when it is
// something else.
func boolField(obj map[string]any, path string) (bool, error) {
	switch v := field(obj, path).(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s: want true or false, not %T", path, v)
	}
}

// stringMapField is the map of strings at path (commonMetadata.labels): nil when
// absent, an error when a value is not a string.
func stringMapField(obj map[string]any, path string) (map[string]string, error) {
	m, err := mapField(obj, path)
	if err != nil || m == nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s.%s: want a string, not %T", path, k, v)
		}
		out[k] = s
	}
	return out, nil
}
