package entry

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/scrub"
)

// scrubSides scrubs every scalar of the two sides of an object (either may be nil)
// before they are rendered as YAML, where a long value may be folded over lines or
// quoted with YAML's escapes. A scalar that differs between the sides but not once
// scrubbed shows as "… (before)" / "… (after)", so the change is still seen. It
// reports whether anything was scrubbed and, when compare is set, whether the sides
// differed as JSON before they were scrubbed, which is whether their YAML did: toYAML
// renders what the JSON encoding says.
func scrubSides(sc *scrub.Scrubber, live, merged *unstructured.Unstructured, compare bool) (scrubbed, differ bool) {
	var l, m any = missing, missing
	if live != nil {
		l = live.Object
	}
	if merged != nil {
		m = merged.Object
	}
	w := &pairScrub{sc: sc, compare: compare}
	w.scrubPair(l, m)
	return w.changed, w.differ
}

// pairScrub walks two sides of an object together.
type pairScrub struct {
	sc *scrub.Scrubber
	// compare asks for differ: whether the sides differ, found as they are walked.
	compare, changed, differ bool
}

// scrubPair scrubs l and m, the values of the two sides at one path, and returns them.
func (s *pairScrub) scrubPair(l, m any) (any, any) {
	lm, lok := l.(map[string]any)
	mm, mok := m.(map[string]any)
	if lok || mok {
		// A side of another type (a map that became a string) is scrubbed alone; a
		// nil map is JSON's null, an empty one {}.
		s.notice(lok != mok || (lm == nil) != (mm == nil))
		if !lok {
			l, _ = s.scrubPair(l, missing)
		}
		if !mok {
			_, m = s.scrubPair(missing, m)
		}
		for _, k := range unionKeys(lm, mm, "*") {
			nl, nm := s.scrubPair(get(lm, k), get(mm, k))
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
	if lok || mok {
		s.notice(lok != mok || (ls == nil) != (ms == nil))
		if !lok {
			l, _ = s.scrubPair(l, missing)
		}
		if !mok {
			_, m = s.scrubPair(missing, m)
		}
		for i := 0; i < max(len(ls), len(ms)); i++ {
			var li, mi any = missing, missing
			if i < len(ls) {
				li = ls[i]
			}
			if i < len(ms) {
				mi = ms[i]
			}
			li, mi = s.scrubPair(li, mi)
			if i < len(ls) {
				ls[i] = li
			}
			if i < len(ms) {
				ms[i] = mi
			}
		}
		return l, m
	}
	s.notice(s.compare && !s.differ && !sameScalar(l, m)) // compared before they are scrubbed
	sl, lch := scrubScalar(s.sc, l)
	sm, mch := scrubScalar(s.sc, m)
	s.changed = s.changed || lch || mch
	if (lch || mch) && l != missing && m != missing && !sameJSON(l, m) && sameJSON(sl, sm) {
		return fmt.Sprint(sl) + " (before)", fmt.Sprint(sm) + " (after)"
	}
	return sl, sm
}

// notice records that the sides differ, when asked to compare them.
func (s *pairScrub) notice(differ bool) {
	if s.compare && differ {
		s.differ = true
	}
}

// sameScalar reports whether two scalars (or a missing side) are the same in JSON:
// strings of valid UTF-8, int64s and booleans compared as they are, anything else
// through its encoding.
func sameScalar(l, m any) bool {
	if l == missing || m == missing {
		return l == m
	}
	switch a := l.(type) {
	case nil:
		if m == nil {
			return true
		}
	case string:
		if b, ok := m.(string); ok && (a == b || utf8.ValidString(a) && utf8.ValidString(b)) {
			return a == b
		}
	case int64:
		if b, ok := m.(int64); ok {
			return a == b
		}
	case bool:
		if b, ok := m.(bool); ok {
			return a == b
		}
	}
	return sameJSON(l, m)
}

// scrubScalar scrubs a string, or a number as it is printed; a number that holds a
// value becomes the string "***".
func scrubScalar(sc *scrub.Scrubber, v any) (any, bool) {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case nil, bool, missingValue:
		return v, false
	case int64:
		text = strconv.FormatInt(x, 10)
	default:
		text = fmt.Sprint(x)
	}
	out := sc.Scrub(text)
	if out == text {
		return v, false
	}
	return out, true
}
