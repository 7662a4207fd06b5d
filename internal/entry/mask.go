package entry

import (
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/scrub"
)

// Masked values, as kubectl diff shows them.
const (
	maskSame   = scrub.Masked
	maskBefore = scrub.Masked + " (before)"
	maskAfter  = scrub.Masked + " (after)"
)

// maskSecrets replaces the values under data and stringData of v1 Secrets (either may
// be nil) so that no value reaches output: a value that differs between the two sides
// shows as "*** (before)" / "*** (after)", any other as "***". It also drops the
// last-applied-configuration annotation, which holds the values. Both objects are
// modified in place; they must be copies.
func maskSecrets(live, merged *unstructured.Unstructured) {
	for _, field := range []string{"data", "stringData"} {
		lv, _, _ := unstructured.NestedMap(objectOf(live), field)
		mv, _, _ := unstructured.NestedMap(objectOf(merged), field)
		for k := range lv {
			if v, ok := mv[k]; ok && !equalValue(lv[k], v) {
				lv[k], mv[k] = maskBefore, maskAfter
				continue
			}
			lv[k] = maskSame
		}
		for k := range mv {
			if mv[k] != maskAfter {
				mv[k] = maskSame
			}
		}
		if lv != nil {
			_ = unstructured.SetNestedMap(live.Object, lv, field)
		}
		if mv != nil {
			_ = unstructured.SetNestedMap(merged.Object, mv, field)
		}
	}
	for _, u := range []*unstructured.Unstructured{live, merged} {
		if u == nil {
			continue
		}
		ann := u.GetAnnotations()
		if _, ok := ann[dryrun.LastAppliedAnnotation]; ok {
			delete(ann, dryrun.LastAppliedAnnotation)
			if len(ann) == 0 {
				unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
			} else {
				u.SetAnnotations(ann)
			}
		}
	}
}

func equalValue(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	return aok && bok && as == bs
}

// missingValue marks a side that has no value at a path (missing).
type missingValue struct{}

var missing = missingValue{}

// applyMask masks the values at the pointers on both sides (either may be nil): a
// value that differs shows as "*** (before)" / "*** (after)", any other as "***".
func applyMask(pointers [][]string, live, merged *unstructured.Unstructured) {
	for _, p := range pointers {
		var l, m any = missing, missing
		if live != nil {
			l = live.Object
		}
		if merged != nil {
			m = merged.Object
		}
		maskPointer(l, m, p)
	}
}

// maskPointer masks what the pointer's tokens select on both sides.
func maskPointer(l, m any, toks []string) (any, any) {
	if len(toks) == 0 {
		return maskPair(l, m)
	}
	tok, rest := toks[0], toks[1:]
	lm, lok := l.(map[string]any)
	mm, mok := m.(map[string]any)
	if lok || mok {
		for _, k := range unionKeys(lm, mm, tok) {
			nl, nm := maskPointer(get(lm, k), get(mm, k), rest)
			if _, ok := lm[k]; ok {
				lm[k] = nl
			}
			if _, ok := mm[k]; ok {
				mm[k] = nm
			}
		}
		return l, m
	}
	ls, lok := l.([]any)
	ms, mok := m.([]any)
	if !lok && !mok {
		return l, m
	}
	n := max(len(ls), len(ms))
	for i := 0; i < n; i++ {
		if tok != "*" && tok != strconv.Itoa(i) {
			continue
		}
		var li, mi any = missing, missing
		if i < len(ls) {
			li = ls[i]
		}
		if i < len(ms) {
			mi = ms[i]
		}
		li, mi = maskPointer(li, mi, rest)
		if i < len(ls) {
			ls[i] = li
		}
		if i < len(ms) {
			ms[i] = mi
		}
	}
	return l, m
}

// unionKeys are the keys tok names in a and b: itself, or for "*" every key of
// either, sorted.
func unionKeys(a, b map[string]any, tok string) []string {
	if tok != "*" {
		return []string{tok}
	}
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// get is m's value at k, missing when m has none.
func get(m map[string]any, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return missing
}

// maskPair masks every leaf of two values, walking maps key by key.
func maskPair(l, m any) (any, any) {
	lm, lok := l.(map[string]any)
	mm, mok := m.(map[string]any)
	if lok && mok {
		for _, k := range unionKeys(lm, mm, "*") {
			nl, nm := maskPair(get(lm, k), get(mm, k))
			if _, ok := lm[k]; ok {
				lm[k] = nl
			}
			if _, ok := mm[k]; ok {
				mm[k] = nm
			}
		}
		return lm, mm
	}
	if lok && m == missing {
		for k, v := range lm {
			lm[k], _ = maskPair(v, missing)
		}
		return lm, m
	}
	if mok && l == missing {
		for k, v := range mm {
			_, mm[k] = maskPair(missing, v)
		}
		return l, mm
	}
	switch {
	case l == missing && m == missing:
		return l, m
	case l == missing:
		return l, maskSame
	case m == missing:
		return maskSame, m
	case sameJSON(l, m):
		return maskSame, maskSame
	}
	return maskBefore, maskAfter
}

// maskedValues collects the values at the pointers, of any type, so that the report
// can be scrubbed of them.
func maskedValues(pointers [][]string, objs ...*unstructured.Unstructured) []any {
	var out []any
	var walk func(v any, toks []string)
	walk = func(v any, toks []string) {
		if len(toks) == 0 {
			out = append(out, v)
			return
		}
		switch c := v.(type) {
		case map[string]any:
			for _, k := range unionKeys(c, nil, toks[0]) {
				if x, ok := c[k]; ok {
					walk(x, toks[1:])
				}
			}
		case []any:
			for i, x := range c {
				if toks[0] == "*" || toks[0] == strconv.Itoa(i) {
					walk(x, toks[1:])
				}
			}
		}
	}
	for _, u := range objs {
		if u == nil {
			continue
		}
		for _, p := range pointers {
			walk(u.Object, p)
		}
	}
	return out
}
