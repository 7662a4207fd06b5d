package entry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/drift-gitops/drift/internal/applier/fields"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/object"
)

// rules are a target's ignore and mask rules as the run applies them: JSON pointers
// split into their tokens, jq path expressions compiled (once per run, Builder.jq).
type rules struct {
	ignore []ignoreRule
	mask   []maskRule
}

// ignoreRule is a compiled config.IgnoreRule.
type ignoreRule struct {
	config.Selector
	pointers [][]string
	managers []string
	jq       []*jqExpr
}

// maskRule is a compiled config.MaskRule.
type maskRule struct {
	config.Selector
	pointers [][]string
}

// compile compiles a target's rules.
func (b *Builder) compile(r config.Rules) *rules {
	out := &rules{}
	for _, rule := range r.Ignore {
		ir := ignoreRule{Selector: rule.Selector, pointers: pointersOf(rule.Paths), managers: rule.Managers}
		for _, expr := range rule.JQ {
			ir.jq = append(ir.jq, b.jq.compile(expr))
		}
		out.ignore = append(out.ignore, ir)
	}
	for _, rule := range r.Mask {
		out.mask = append(out.mask, maskRule{Selector: rule.Selector, pointers: pointersOf(rule.Paths)})
	}
	return out
}

// pointersOf are JSON pointers split into their tokens.
func pointersOf(paths []string) [][]string {
	out := make([][]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, pointerTokens(p))
	}
	return out
}

// ignoreFor are what the rules leave out of an object's comparison: the fields at
// the pointers, those the managers own, and what the jq expressions select.
func (r *rules) ignoreFor(id object.ID) (pointers [][]string, managers []string, jq []*jqExpr) {
	for _, rule := range r.ignore {
		if rule.Matches(id.Group, id.Kind, id.Namespace, id.Name) {
			pointers = append(pointers, rule.pointers...)
			managers = append(managers, rule.managers...)
			jq = append(jq, rule.jq...)
		}
	}
	return pointers, managers, jq
}

// maskFor are the pointers of the fields the rules mask in an object.
func (r *rules) maskFor(id object.ID) [][]string {
	var pointers [][]string
	for _, rule := range r.mask {
		if rule.Matches(id.Group, id.Kind, id.Namespace, id.Name) {
			pointers = append(pointers, rule.pointers...)
		}
	}
	return pointers
}

// managedBy returns the fields the live object says the matching managers own.
func managedBy(live *unstructured.Unstructured, managers []string) []fieldpath.Path {
	if live == nil || len(managers) == 0 {
		return nil
	}
	var out []fieldpath.Path
	for _, mf := range live.GetManagedFields() {
		if !config.ManagerMatches(managers, mf.Manager) {
			continue
		}
		set, err := fields.Of(mf)
		if err != nil {
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

// applyIgnore removes the ignored fields from both sides (either may be nil).
func applyIgnore(pointers [][]string, owned []fieldpath.Path, objs ...*unstructured.Unstructured) {
	for _, u := range objs {
		if u == nil {
			continue
		}
		for _, p := range pointers {
			removePointer(u.Object, p)
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

// itemMatches reports whether the i-th item of a list is the one a managed-fields
// path element names (by index, value or key).
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

// sameJSON reports whether a and b have the same JSON encoding.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
