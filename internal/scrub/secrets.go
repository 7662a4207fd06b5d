package scrub

import (
	"encoding/base64"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AddSecrets adds every value the Secrets among objs (any may be nil) carry: data
// decoded and as it is, stringData of any type (a number the server refuses is still
// quoted in its answer), and what the last-applied-configuration annotation holds,
// which may be older values.
func (s *Scrubber) AddSecrets(objs ...*unstructured.Unstructured) {
	for _, u := range objs {
		if !IsSecret(u) {
			continue
		}
		data, _, _ := unstructured.NestedFieldNoCopy(u.Object, "data")
		if m, ok := data.(map[string]any); ok {
			for _, v := range m {
				s.AddValue(v)
				if str, ok := v.(string); ok {
					if dec, err := base64.StdEncoding.DecodeString(str); err == nil {
						s.addString(string(dec))
					}
				}
			}
		} else {
			s.AddValue(data)
		}
		stringData, _, _ := unstructured.NestedFieldNoCopy(u.Object, "stringData")
		s.AddValue(stringData)
		if la := u.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; la != "" {
			s.addString(la)
			prev := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(la), &prev.Object); err == nil {
				unstructured.RemoveNestedField(prev.Object, "metadata", "annotations")
				s.AddSecrets(prev)
			}
		}
	}
}

// IsSecret reports whether u is a v1 Secret (false for nil).
func IsSecret(u *unstructured.Unstructured) bool {
	if u == nil {
		return false
	}
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// Value scrubs every key and string of a value decoded from YAML or JSON.
func (s *Scrubber) Value(v any) any {
	switch x := v.(type) {
	case string:
		return s.Scrub(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[s.Scrub(k)] = s.Value(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.Value(e)
		}
		return out
	}
	return v
}
