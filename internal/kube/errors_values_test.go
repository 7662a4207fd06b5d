package kube

import (
	"strings"
	"testing"
)

// TestValuesOfFieldsOfTheWrongTypeAreNotQuoted: the server quotes the value of a
// field of the wrong type, a Secret's number as much as any; the message names the
// type instead, keeping the rest of the server's words.
func TestValuesOfFieldsOfTheWrongTypeAreNotQuoted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ value, want string }{
		{"98765432123", "a number"},
		{"1.2345678901234567e+19", "a number"},
		{"true", "a boolean"},
		{`"s3cr3t-value"`, "a string"},
		{`map[string]interface {}{"inner":"s3cr3t-value"}`, "a map"},
		{`[]interface {}{"s3cr3t-value", 2}`, "a list"},
		{`main.x{y:"s3cr3t-value"}`, "another value"},
	} {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			server := "failed to create typed patch object (shop/db; /v1, Kind=Secret): errors:\n  .stringData.a: expected string, got &value.valueUnstructured{Value:" + c.value + "}\n  .stringData.b: expected string, got &value.valueUnstructured{Value:" + c.value + "}"
			got := WithoutValues(server)
			if strings.Contains(got, strings.Trim(c.value, `"`)) || strings.Count(got, "expected string, got "+c.want) != 2 {
				t.Fatalf("%q", got)
			}
		})
	}
}
