package report

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// scrubObjects scrubs every scalar of the two sides of an object (either may be nil)
// before they are rendered as YAML, where a long value may be folded over lines or
// quoted with YAML's escapes. A scalar that differs between the sides but not once
// scrubbed shows as "… (before)" / "… (after)", so the change is still seen. It
// reports whether anything was scrubbed.
func (s *Scrubber) scrubObjects(live, merged *unstructured.Unstructured) bool {
	var l, m any = missing, missing
	if live != nil {
		l = live.Object
	}
	if merged != nil {
		m = merged.Object
	}
	w := &pairScrub{Scrubber: s}
	w.scrubPair(l, m)
	return w.changed
}

// pairScrub walks two sides of an object together.
type pairScrub struct {
	*Scrubber
	changed bool
}

func (s *pairScrub) scrubPair(l, m any) (any, any) {
	lm, lok := l.(map[string]any)
	mm, mok := m.(map[string]any)
	if lok || mok {
		// A side of another type (a map that became a string) is scrubbed alone.
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
	sl, lch := s.scrubScalar(l)
	sm, mch := s.scrubScalar(m)
	s.changed = s.changed || lch || mch
	if (lch || mch) && l != missing && m != missing && !sameJSON(l, m) && sameJSON(sl, sm) {
		return fmt.Sprint(sl) + " (before)", fmt.Sprint(sm) + " (after)"
	}
	return sl, sm
}

// scrubScalar scrubs a string, or a number as it is printed; a number that holds a
// value becomes the string "***".
func (s *Scrubber) scrubScalar(v any) (any, bool) {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case nil, bool, missingValue:
		return v, false
	default:
		text = fmt.Sprint(x)
	}
	out := s.Scrub(text)
	if out == text {
		return v, false
	}
	return out, true
}

// scrubReport scrubs every message of the report: errors, warnings, notes, reasons and
// the configuration's diff. Objects' YAML and diffs are scrubbed as they are built.
// scrubValue scrubs every key and string of a field's value.
func (s *Scrubber) scrubValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.Scrub(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[s.Scrub(k)] = s.scrubValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.scrubValue(e)
		}
		return out
	}
	return v
}

func (s *Scrubber) scrubReport(rep *Report) {
	for i := range rep.Targets {
		t := &rep.Targets[i]
		t.Skipped = s.Scrub(t.Skipped)
		for j := range t.Notes {
			t.Notes[j] = s.Scrub(t.Notes[j])
		}
		for j := range t.Kept {
			t.Kept[j].Reason = s.Scrub(t.Kept[j].Reason)
		}
		for _, objs := range [][]Object{t.Objects, t.Drift} {
			for j := range objs {
				o := &objs[j]
				o.Error = s.Scrub(o.Error)
				for k := range o.Warnings {
					o.Warnings[k].Message = s.Scrub(o.Warnings[k].Message)
				}
				for k := range o.Risks {
					o.Risks[k].Message = s.Scrub(o.Risks[k].Message)
				}
				o.What = s.Scrub(o.What)
				for k := range o.Changes {
					c := &o.Changes[k]
					c.Path, c.Before, c.After = s.Scrub(c.Path), s.scrubValue(c.Before), s.scrubValue(c.After)
				}
				// Scalars were scrubbed before the YAML was rendered; this catches keys,
				// and values split over lines, which show only line by line.
				o.Diff, o.live, o.merged = s.scrubYAML(o.Diff), s.scrubYAML(o.live), s.scrubYAML(o.merged)
			}
		}
	}
	if c := rep.Config; c != nil {
		c.Diff = s.scrubYAML(c.Diff)
		for i := range c.NotApplied {
			c.NotApplied[i] = s.Scrub(c.NotApplied[i])
		}
	}
}
