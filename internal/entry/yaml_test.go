package entry

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestYAMLIsKubectlsYAML: the direct encoding gives sigs.k8s.io/yaml's bytes for
// values YAML could mistake for something else, and floats and text that is not
// UTF-8 go the library's way.
func TestYAMLIsKubectlsYAML(t *testing.T) {
	tricky := []any{"", " ", "yes", "no", "on", "off", "y", "n", "true", "False", "null", "~", "Null", "NULL",
		"0", "1", "-1", "0x1F", "0o17", "017", "1e3", "1.5", ".5", ".inf", "-.Inf", ".nan", "1_000", "12:30:45", "2026-11-23",
		"a: b", "- x", "#x", "x #y", "&a", "*a", "!x", "%x", "@x", "`x", "'q'", `"dq"`, "{x}", "[x]", "x,y", "?", ":",
		"line\nbreak", "trailing\n", "\n", "  lead", "trail  ", "tab\there", "\u00e9t\u00e9", "\u00a0nbsp", "\U0001F600",
		strings.Repeat("long words ", 20), strings.Repeat("x", 200), "multi\nline\n\nwith blank\n",
		int64(0), int64(-1), int64(1 << 62), int64(-1 << 63), true, false, nil,
		map[string]any{}, []any{}, []any{nil, "a", int64(1), map[string]any{"k": []any{}}},
		map[string]any{"a10": "x", "a2": "y", "A": "z", "b": map[string]any{"2": "x", "10": "y", "-": "z", "": "e"}},
	}
	obj := map[string]any{}
	list := []any{}
	for i, v := range tricky {
		obj[fmt.Sprintf("k%d", i)] = v
		list = append(list, v)
		// As keys too, but those that start with a digit: yaml.v2 orders keys with a
		// comparison that is not transitive for some of them ("017", "0o17", "1e3"),
		// so their order depends on Go's map order, through JSON or not.
		if s, ok := v.(string); ok && s != "" && (s[0] < '0' || s[0] > '9') {
			obj[s] = "as a key"
		}
	}
	obj["list"] = list
	obj["nested"] = map[string]any{"deeper": map[string]any{"list": list}}
	for name, o := range map[string]map[string]any{
		"plain":         obj,
		"float":         {"f": 1234567.0, "g": 0.5, "h": 1e21, "i": -0.0},
		"not utf-8":     {"s": "a\xffb"},
		"not utf-8 key": {"a\xffb": "s"},
	} {
		want, wantErr := yaml.Marshal(o)
		got, err := toYAML(&unstructured.Unstructured{Object: o})
		if (err == nil) != (wantErr == nil) {
			t.Errorf("%s: toYAML's error %v, sigs.k8s.io/yaml's %v", name, err, wantErr)
		}
		if got != string(want) {
			t.Errorf("%s: toYAML differs from sigs.k8s.io/yaml:\n%s\nwant:\n%s", name, got, want)
		}
	}
	if !plainJSON(obj) || plainJSON(map[string]any{"f": 1.0}) || plainJSON(map[string]any{"s": "\xff"}) || plainJSON(map[string]any{"s": "\u2028"}) || plainJSON(map[string]any{"i": 1}) {
		t.Error("plainJSON takes the direct way for what it must not, or not for API objects")
	}
}
