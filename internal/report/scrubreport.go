package report

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

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
	msg := func(text string) string { return lineText(s.Scrub(text)) }
	for i := range rep.Targets {
		t := &rep.Targets[i]
		t.Skipped = msg(t.Skipped)
		for j := range t.Notes {
			t.Notes[j] = msg(t.Notes[j])
		}
		for j := range t.Kept {
			t.Kept[j].Reason = msg(t.Kept[j].Reason)
		}
		for _, objs := range [][]Object{t.Objects, t.Drift} {
			for j := range objs {
				o := &objs[j]
				o.Error = msg(o.Error)
				for k := range o.Warnings {
					o.Warnings[k].Message = msg(o.Warnings[k].Message)
				}
				for k := range o.Risks {
					o.Risks[k].Message = msg(o.Risks[k].Message)
				}
				o.What = msg(o.What)
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
			c.NotApplied[i] = msg(c.NotApplied[i])
		}
	}
}

// lineText is a message with every control character but newline and tab written as
// its Go escape (a carriage return as \r, a terminal escape as \x1b), and the
// Unicode line and paragraph separators too: what a chart's fail message or a
// server's answer holds can then neither end a line where a reader (a terminal, the
// Actions runner, a markdown renderer) does not expect it nor move the cursor.
// drift report merge refuses a shard's report holding any of them.
func lineText(s string) string {
	if !strings.ContainsFunc(s, escapedRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if escapedRune(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func escapedRune(r rune) bool {
	return (unicode.IsControl(r) && r != '\n' && r != '\t') || r == '\u2028' || r == '\u2029'
}
