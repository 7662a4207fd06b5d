package entry

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jqTimeout bounds one expression on one object, as Argo CD bounds its
// jqPathExpressions (one second by default).
const jqTimeout = time.Second

// jqExpr is an ignore rule's jq path expression compiled as del(EXPR), or why it
// could not be.
type jqExpr struct {
	expr string
	code *gojq.Code
	err  error
}

// jqCache compiles each jq path expression once per run, however many targets and
// objects its rules select. A compiled gojq.Code is safe to run in goroutines.
type jqCache struct {
	mu    sync.Mutex
	exprs map[string]*jqExpr
}

// compile returns expr compiled, from the cache after the first time. The
// expressions read nothing but the object: no environment (gojq's default, said
// explicitly), no input.
func (c *jqCache) compile(expr string) *jqExpr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if x := c.exprs[expr]; x != nil {
		return x
	}
	x := &jqExpr{expr: expr}
	if q, err := gojq.Parse("del(" + expr + ")"); err != nil {
		x.err = fmt.Errorf("jq path expression %q does not parse: %v", expr, err)
	} else if x.code, err = gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil })); err != nil {
		x.err = fmt.Errorf("jq path expression %q: %v", expr, err)
	}
	if c.exprs == nil {
		c.exprs = map[string]*jqExpr{}
	}
	c.exprs[expr] = x
	return x
}

// applyJQ removes what each jq path expression selects from both sides (either may
// be nil), as Argo CD's ignoreDifferences jqPathExpressions do: del(EXPR).
func applyJQ(exprs []*jqExpr, objs ...*unstructured.Unstructured) error {
	for _, x := range exprs {
		if x.err != nil {
			return x.err
		}
		for _, u := range objs {
			if u == nil {
				continue
			}
			out, err := runJQ(x.code, u.Object)
			if err != nil {
				return fmt.Errorf("jq path expression %q: %v", x.expr, err)
			}
			u.Object = out
		}
	}
	return nil
}

// runJQ runs compiled code on an object, within jqTimeout, and returns its one result.
func runJQ(code *gojq.Code, obj map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), jqTimeout)
	defer cancel()
	iter := code.RunWithContext(ctx, normalizeJSON(obj))
	v, ok := iter.Next()
	if !ok {
		return nil, fmt.Errorf("selects nothing to delete from")
	}
	if err, isErr := v.(error); isErr {
		return nil, err
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, fmt.Errorf("leaves %T, not an object", v)
	}
	return m, nil
}

// normalizeJSON converts an object's numbers to the types gojq takes (int64 to int).
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			out[k] = normalizeJSON(vv)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, vv := range x {
			out[i] = normalizeJSON(vv)
		}
		return out
	case int64:
		return int(x)
	case int32:
		return int(x)
	}
	return v
}
