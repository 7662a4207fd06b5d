package entry

import (
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// toYAML renders an object as sigs.k8s.io/yaml (kubectl's printer) does. That library
// encodes to JSON, parses the JSON as YAML and encodes that: for an object made only
// of strings, booleans, nulls, int64s, maps and lists, as decoded API objects are,
// encoding it as YAML directly gives the same bytes in a third of the time. Anything
// else (a float, which JSON may print as an integer; text that is not UTF-8, which
// JSON replaces, or that holds control characters) takes the library's way.
func toYAML(u *unstructured.Unstructured) (string, error) {
	if u == nil {
		return "", nil
	}
	var b []byte
	var err error
	if plainJSON(u.Object) {
		b, err = yamlv2.Marshal(u.Object)
	} else {
		b, err = yaml.Marshal(u.Object)
	}
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// plainText reports whether s is UTF-8 without the characters JSON escapes or the
// YAML parser refuses (controls but tab and newline, DEL and C1 controls, line and
// paragraph separators, byte-order marks, non-characters).
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return false
		}
	}
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r >= 0x80 && (r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0xfffe && r <= 0xffff) {
			return false
		}
	}
	return true
}

// plainJSON reports whether v holds only values whose YAML is the same whether or
// not it went through JSON first.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return plainText(x)
	case map[string]any:
		for k, e := range x {
			if !plainText(k) || !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}
