package report

import (
	"bytes"
	"encoding/json"
	"path"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
)

// Rules are a target's noise rules from drift.yaml: fields left out of comparison and
// output, and values shown masked.
type Rules struct {
	Ignore []config.IgnoreRule
	Mask   []config.MaskRule
}

func (r Rules) ignoreFor(id object.ID) (paths, managers []string) {
	for _, rule := range r.Ignore {
		if rule.Matches(id.Group, id.Kind, id.Namespace, id.Name) {
			paths = append(paths, rule.Paths...)
			managers = append(managers, rule.Managers...)
		}
	}
	return paths, managers
}

// jqFor are the jq path expressions the target's ignore rules give for an object.
func (r Rules) jqFor(id object.ID) []string {
	var exprs []string
	for _, rule := range r.Ignore {
		if rule.Matches(id.Group, id.Kind, id.Namespace, id.Name) {
			exprs = append(exprs, rule.JQ...)
		}
	}
	return exprs
}

func (r Rules) maskFor(id object.ID) []string {
	var paths []string
	for _, rule := range r.Mask {
		if rule.Matches(id.Group, id.Kind, id.Namespace, id.Name) {
			paths = append(paths, rule.Paths...)
		}
	}
	return paths
}

// Trim drops from a previewed object's result what the report does not read, once its
// preview is done: the prediction's managedFields, and the live object's but for the
// managers the target's ignore rules name for it (kubectl diff strips managedFields
// too). At 10,000 objects it takes a quarter off the run's peak memory.
func (r Rules) Trim(res *dryrun.Result) {
	if res.Merged != nil {
		res.Merged.SetManagedFields(nil)
	}
	if res.Live == nil {
		return
	}
	_, managers := r.ignoreFor(res.ID)
	var keep []metav1.ManagedFieldsEntry
	if len(managers) > 0 {
		for _, mf := range res.Live.GetManagedFields() {
			if matchesAny(managers, mf.Manager) {
				keep = append(keep, mf)
			}
		}
	}
	res.Live.SetManagedFields(keep)
}

// managedBy returns the fields the live object says the matching managers own.
func managedBy(live *unstructured.Unstructured, managers []string) []fieldpath.Path {
	if live == nil || len(managers) == 0 {
		return nil
	}
	var out []fieldpath.Path
	for _, mf := range live.GetManagedFields() {
		if !matchesAny(managers, mf.Manager) || mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			continue
		}
		// List items the manager owns as a whole go first, then single fields.
		set.Iterate(func(p fieldpath.Path) {
			if last := p[len(p)-1]; last.FieldName == nil {
				out = append(out, p.Copy())
			}
		})
		set.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, p.Copy()) })
	}
	return out
}

func matchesAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// applyIgnore removes the ignored fields from both sides (either may be nil).
func applyIgnore(pointers []string, owned []fieldpath.Path, objs ...*unstructured.Unstructured) {
	for _, u := range objs {
		if u == nil {
			continue
		}
		for _, p := range pointers {
			removePointer(u.Object, pointerTokens(p))
		}
		for _, p := range owned {
			removeFieldPath(u.Object, p)
		}
	}
}

// pointerTokens splits an RFC 6901 JSON pointer.
func pointerTokens(p string) []string {
	if p == "" || p == "/" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// removePointer deletes what the tokens point at; "*" matches every key or item. Maps
// emptied by the removal are removed too, so that an ignored field does not leave an
// empty parent on one side only.
func removePointer(v any, toks []string) any {
	if len(toks) == 0 {
		return v
	}
	tok, rest := toks[0], toks[1:]
	switch c := v.(type) {
	case map[string]any:
		keys := []string{tok}
		if tok == "*" {
			keys = keys[:0]
			for k := range c {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			child, ok := c[k]
			if !ok {
				continue
			}
			if len(rest) == 0 {
				delete(c, k)
				continue
			}
			c[k] = removePointer(child, rest)
			if m, ok := c[k].(map[string]any); ok && len(m) == 0 {
				delete(c, k)
			}
		}
		return c
	case []any:
		if tok == "*" {
			if len(rest) == 0 {
				return []any{}
			}
			for i := range c {
				c[i] = removePointer(c[i], rest)
			}
			return c
		}
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(c) {
			return c
		}
		if len(rest) == 0 {
			return append(c[:i:i], c[i+1:]...)
		}
		c[i] = removePointer(c[i], rest)
		return c
	}
	return v
}

// removeFieldPath deletes a managed-fields path (field names, list keys, set values,
// indexes) from an object.
func removeFieldPath(v any, p fieldpath.Path) any {
	if len(p) == 0 {
		return v
	}
	pe, rest := p[0], p[1:]
	switch c := v.(type) {
	case map[string]any:
		if pe.FieldName == nil {
			return c
		}
		child, ok := c[*pe.FieldName]
		if !ok {
			return c
		}
		if len(rest) == 0 {
			delete(c, *pe.FieldName)
			return c
		}
		c[*pe.FieldName] = removeFieldPath(child, rest)
		if m, ok := c[*pe.FieldName].(map[string]any); ok && len(m) == 0 {
			delete(c, *pe.FieldName)
		}
		return c
	case []any:
		for i := 0; i < len(c); i++ {
			if !itemMatches(c[i], i, pe) {
				continue
			}
			if len(rest) == 0 {
				return append(c[:i:i], c[i+1:]...)
			}
			c[i] = removeFieldPath(c[i], rest)
			if m, ok := c[i].(map[string]any); ok && len(m) == 0 {
				return append(c[:i:i], c[i+1:]...)
			}
			return c
		}
	}
	return v
}

func itemMatches(item any, i int, pe fieldpath.PathElement) bool {
	switch {
	case pe.Index != nil:
		return *pe.Index == i
	case pe.Value != nil:
		return sameJSON(item, (*pe.Value).Unstructured())
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			if !sameJSON(m[f.Name], f.Value.Unstructured()) {
				return false
			}
		}
		return true
	}
	return false
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// missing marks a side that has no value at a path.
type missingValue struct{}

var missing = missingValue{}

// applyMask masks the values at the pointers on both sides (either may be nil): a
// value that differs shows as "*** (before)" / "*** (after)", any other as "***".
func applyMask(pointers []string, live, merged *unstructured.Unstructured) {
	for _, p := range pointers {
		var l, m any = missing, missing
		if live != nil {
			l = live.Object
		}
		if merged != nil {
			m = merged.Object
		}
		maskPointer(l, m, pointerTokens(p))
	}
}

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
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

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
func maskedValues(pointers []string, objs ...*unstructured.Unstructured) []any {
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
			walk(u.Object, pointerTokens(p))
		}
	}
	return out
}
