package render

import (
	"math"
	"strconv"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// decodeYAML reads a YAML document into the value kubectl's reading gives it —
// sigs.k8s.io/yaml's YAMLToJSON (go.yaml.in/yaml/v2, then encoding/json), then
// apimachinery's JSON decoding — without the JSON in between, when the document holds
// only values that round trip leaves as they are; ok is false otherwise (a key that is
// not a string, a string that is not UTF-8, a number JSON cannot hold or that would
// change type, maps and lists nested deeper than maxNesting, a parse error), and the
// caller takes the round trip itself, which also words the errors. doc is the document
// as go.yaml.in/yaml/v2 read it, nil when it does not parse.
func decodeYAML(data []byte) (doc, v any, ok bool) {
	if yamlv2.Unmarshal(data, &doc) != nil {
		return nil, nil, false
	}
	v, ok = jsonValue(doc, maxNesting)
	return doc, v, ok
}

// jsonValue is v, a value go.yaml.in/yaml/v2 decoded into an interface, as
// encoding/json writes it and apimachinery's JSON reads it back (int64 for a
// number JSON writes without a point, float64 for the others); ok is false where
// the round trip would change it or fail, and where maps and lists nest more than
// levels deep (v itself the first), which the JSON reading refuses.
func jsonValue(v any, levels int) (any, bool) {
	switch x := v.(type) {
	case nil, bool:
		return x, true
	case string:
		// encoding/json writes invalid UTF-8 as U+FFFD.
		return x, utf8.ValidString(x)
	case int:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		if x > math.MaxInt64 {
			return nil, false
		}
		return int64(x), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false // JSON cannot hold it: YAMLToJSON fails
		}
		// encoding/json writes a whole float64 under 1e21 as its shortest digits
		// without a point or an exponent (9.223372036854775808e18 as
		// 9223372036854776000), which apimachinery reads as an int64 when they
		// fit one.
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			if i, err := strconv.ParseInt(strconv.FormatFloat(x, 'f', -1, 64), 10, 64); err == nil {
				return i, true
			}
		}
		return x, true
	case []any:
		if levels < 1 {
			return nil, false
		}
		out := make([]any, len(x))
		for i, e := range x {
			var ok bool
			if out[i], ok = jsonValue(e, levels-1); !ok {
				return nil, false
			}
		}
		return out, true
	case map[any]any:
		if levels < 1 {
			return nil, false
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			// Other keys become strings in YAMLToJSON, where two of them may
			// become the same string: the round trip decides.
			key, isString := k.(string)
			if !isString || !utf8.ValidString(key) {
				return nil, false
			}
			var ok bool
			if out[key], ok = jsonValue(e, levels-1); !ok {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}
