package report

import (
	"encoding/base64"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Masked values, as kubectl diff shows them.
const (
	maskSame   = "***"
	maskBefore = "*** (before)"
	maskAfter  = "*** (after)"
)

// maskSecrets replaces the values under data and stringData of v1 Secrets (either may
// be nil) so that no value reaches output: a value that differs between the two sides
// shows as "*** (before)" / "*** (after)", any other as "***". It also drops the
// last-applied-configuration annotation, which holds the values. Both objects are
// modified in place; they must be copies.
func maskSecrets(live, merged *unstructured.Unstructured) {
	for _, field := range []string{"data", "stringData"} {
		lv, _, _ := unstructured.NestedMap(objOf(live), field)
		mv, _, _ := unstructured.NestedMap(objOf(merged), field)
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
		if _, ok := ann[lastApplied]; ok {
			delete(ann, lastApplied)
			if len(ann) == 0 {
				unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
			} else {
				u.SetAnnotations(ann)
			}
		}
	}
}

func objOf(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}

func equalValue(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	return aok && bok && as == bs
}

// secretValues collects every value a Secret carries, raw and decoded, so that
// messages can be scrubbed of them.
func secretValues(objs ...*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	for _, u := range objs {
		if !isSecret(u) {
			continue
		}
		for _, field := range []string{"data", "stringData"} {
			m, _, _ := unstructured.NestedMap(u.Object, field)
			for _, v := range m {
				s, ok := v.(string)
				if !ok || s == "" {
					continue
				}
				seen[s] = true
				if field == "data" {
					if dec, err := base64.StdEncoding.DecodeString(s); err == nil && len(dec) > 0 {
						seen[string(dec)] = true
					}
				} else {
					seen[base64.StdEncoding.EncodeToString([]byte(s))] = true
				}
			}
		}
		if la, ok := u.GetAnnotations()[lastApplied]; ok && la != "" {
			seen[la] = true
		}
	}
	vals := make([]string, 0, len(seen))
	for v := range seen {
		vals = append(vals, v)
	}
	return sortSecrets(vals)
}

// sortSecrets drops values too short to scrub safely and duplicates, and orders the
// rest longest first.
func sortSecrets(in []string) []string {
	seen := map[string]bool{}
	vals := in[:0]
	for _, v := range in {
		if len(strings.TrimSpace(v)) >= 3 && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	// Longest first, so a value is not half-replaced through a shorter one inside it.
	sort.Slice(vals, func(i, j int) bool {
		if len(vals[i]) != len(vals[j]) {
			return len(vals[i]) > len(vals[j])
		}
		return vals[i] < vals[j]
	})
	return vals
}

// scrub replaces every secret value in s with "***".
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, maskSame)
	}
	return s
}
