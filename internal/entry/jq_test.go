package entry

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jq path expressions delete what they select, as Argo CD's jqPathExpressions do,
// read nothing from the environment, and end at their time limit.
func TestJQPathExpressionsDeleteWhatTheySelect(t *testing.T) {
	t.Setenv("DRIFT_JQ_NAME", "web")
	obj := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(3), "containers": []any{
			map[string]any{"name": "web", "image": "web:1"}, map[string]any{"name": "istio-proxy", "image": "proxy:1"}}}}}
	}
	var c jqCache
	compile := func(exprs ...string) []*jqExpr {
		var out []*jqExpr
		for _, e := range exprs {
			out = append(out, c.compile(e))
		}
		return out
	}
	live, merged := obj(), obj()
	if err := applyJQ(compile(`.spec.containers[] | select(.name == "istio-proxy")`, ".spec.replicas"), live, nil, merged); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*unstructured.Unstructured{live, merged} {
		spec := u.Object["spec"].(map[string]any)
		if _, ok := spec["replicas"]; ok || len(spec["containers"].([]any)) != 1 {
			t.Errorf("left: %v", spec)
		}
	}
	u := obj()
	if err := applyJQ(compile(`.spec.containers[] | select(.name == $ENV.DRIFT_JQ_NAME or .name == env.DRIFT_JQ_NAME)`), u); err != nil {
		t.Fatal(err)
	}
	if len(u.Object["spec"].(map[string]any)["containers"].([]any)) != 2 {
		t.Error("a jq expression read the environment")
	}
	for expr, want := range map[string]string{
		".spec[":                 "does not parse",
		"last(range(1e12)) | .a": "deadline",
		"input":                  "input",
	} {
		if err := applyJQ(compile(expr), obj()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", expr, err, want)
		}
	}
}
