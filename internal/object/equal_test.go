package object

import (
	"reflect"
	"testing"
)

// TestJSONEqualIsDeepEqual: JSONEqual answers as reflect.DeepEqual on what JSON
// decodes to, nil and empty containers told apart as DeepEqual tells them.
func TestJSONEqualIsDeepEqual(t *testing.T) {
	values := []any{
		nil, true, false, "", "a", int64(1), int64(2), float64(1), 0.5,
		map[string]any{}, map[string]any(nil), map[string]any{"a": int64(1)}, map[string]any{"a": float64(1)},
		map[string]any{"a": []any{"x", map[string]any{"b": nil}}}, map[string]any{"a": []any{"x", map[string]any{"b": false}}},
		[]any{}, []any(nil), []any{int64(1), "b"}, []any{"b", int64(1)}, int32(1),
	}
	for _, a := range values {
		for _, b := range values {
			if got, want := JSONEqual(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("JSONEqual(%#v, %#v) = %v, DeepEqual %v", a, b, got, want)
			}
		}
	}
}
