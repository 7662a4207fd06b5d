package report

import (
	"encoding/base64"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
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

// AddSecrets adds every value the Secrets among objs (any may be nil) carry: data
// decoded and as it is, stringData of any type (a number the server refuses is still
// quoted in its answer), and what the last-applied-configuration annotation holds,
// which may be older values.
func (s *Scrubber) AddSecrets(objs ...*unstructured.Unstructured) {
	for _, u := range objs {
		if !isSecret(u) {
			continue
		}
		data, _, _ := unstructured.NestedFieldNoCopy(u.Object, "data")
		if m, ok := data.(map[string]any); ok {
			for _, v := range m {
				s.addValue(v)
				if str, ok := v.(string); ok {
					if dec, err := base64.StdEncoding.DecodeString(str); err == nil {
						s.addString(string(dec))
					}
				}
			}
		} else {
			s.addValue(data)
		}
		stringData, _, _ := unstructured.NestedFieldNoCopy(u.Object, "stringData")
		s.addValue(stringData)
		if la := u.GetAnnotations()[lastApplied]; la != "" {
			s.addString(la)
			prev := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(la), &prev.Object); err == nil {
				unstructured.RemoveNestedField(prev.Object, "metadata", "annotations")
				s.AddSecrets(prev)
			}
		}
	}
}

// addResult adds the values of a result's Secrets and the values its mask rules
// mask, on every side (rendered, live, merged).
func (s *Scrubber) addResult(r dryrun.Result, rules Rules) {
	s.AddSecrets(r.Object.Obj, r.Live, r.Merged)
	if masked := rules.maskFor(r.ID); len(masked) > 0 {
		for _, v := range maskedValues(masked, r.Object.Obj, r.Live, r.Merged) {
			s.addValue(v)
		}
	}
}
