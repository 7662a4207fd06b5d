package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// maxNesting is how deep an object's maps and lists may nest, the object's own mapping
// the first level. It is the depth past which every JSON reader an object meets refuses
// it: encoding/json's scanner (json.Valid on the render wire) and its fork
// sigs.k8s.io/json (apimachinery's JSON: kubectl's reading of a manifest, Object.Get,
// the API server's decoding of a request body) stop at 10,000 levels, as do
// apimachinery's CBOR and go.yaml.in/yaml/v2's flow collections (an apply body as the
// API server reads it). YAML can write deeper: go.yaml.in/yaml/v2 allows 10,000
// levels of indentation and 10,000 of flow collections besides, and drift's reader
// (decodeYAML) builds the value without the JSON kubectl goes through. So the reader
// refuses a document deeper than this, naming it (readDocument), and every object it
// reads crosses the render wire, decodes in Object.Get and can be sent; an object
// deeper than this that reaches the wire all the same is a failure of its own
// (worker.DecodeResponse: Unread), never its target's.
const maxNesting = 10000

// tooDeepMessage says that what (a document, an object) nests deeper than maxNesting.
func tooDeepMessage(what string) string {
	return fmt.Sprintf("%s nests maps and lists more than %d levels deep, deeper than kubectl and the API server read JSON: flatten it", what, maxNesting)
}

// Unread is the failure of an object the render worker sent whose content drift
// does not read as a JSON object: nested deeper than maxNesting (which drift's
// reader refuses, but an object a renderer built may hold), or not JSON at all (a
// bug). Its content is never quoted.
func Unread(o Object, content []byte) Failure {
	f := Failure{Source: o.Source, Doc: o.Doc, Item: o.Item, ID: KnownID(o)}
	if jsonNesting(content) > maxNesting {
		f.Reason, f.Message = reason.TooLarge, tooDeepMessage("the object")
	} else {
		f.Reason, f.Message = reason.RenderFailed, "the render worker sent an object that is not a JSON object: this is a bug in drift, please report it"
	}
	return f
}

// tooDeep is the failure of a document nested deeper than maxNesting, with the
// identity its top level gives (top: its apiVersion, kind and metadata's name,
// namespace and generateName, those that are strings).
func tooDeep(top map[string]any) *Failure {
	f := &Failure{Reason: reason.TooLarge, Message: tooDeepMessage("document")}
	u := &unstructured.Unstructured{Object: top}
	if u.GetAPIVersion() != "" && u.GetKind() != "" && !strings.HasSuffix(u.GetKind(), "List") {
		id := object.IDOf(u)
		f.ID = &id
	}
	return f
}

// deeperThan reports whether v, a document as go.yaml.in/yaml/v2 or JSON decodes it,
// nests maps and lists more than levels deep (v itself the first); it looks no deeper.
func deeperThan(v any, levels int) bool {
	switch x := v.(type) {
	case map[any]any:
		if levels < 1 {
			return true
		}
		for _, e := range x {
			if deeperThan(e, levels-1) {
				return true
			}
		}
	case map[string]any:
		if levels < 1 {
			return true
		}
		for _, e := range x {
			if deeperThan(e, levels-1) {
				return true
			}
		}
	case []any:
		if levels < 1 {
			return true
		}
		for _, e := range x {
			if deeperThan(e, levels-1) {
				return true
			}
		}
	}
	return false
}

// yamlTop is the identity fields of doc, a document as go.yaml.in/yaml/v2 decodes it,
// as a map: apiVersion, kind and metadata's name, namespace and generateName, those
// that are strings.
func yamlTop(doc any) map[string]any {
	top, meta := map[string]any{}, map[string]any{}
	top["metadata"] = meta
	m, _ := doc.(map[any]any)
	for k, v := range m {
		if s, ok := v.(string); ok && isTopField(k) {
			top[k.(string)] = s
		}
	}
	md, _ := m["metadata"].(map[any]any)
	for k, v := range md {
		if s, ok := v.(string); ok && isMetadataField(k) {
			meta[k.(string)] = s
		}
	}
	return top
}

func isTopField(k any) bool { return k == "apiVersion" || k == "kind" }

func isMetadataField(k any) bool { return k == "name" || k == "namespace" || k == "generateName" }

// jsonTop reads b, a JSON object, token by token (json.Decoder's tokens know no depth
// limit, where its values and json.Unmarshal stop at maxNesting): it gives the
// object's identity fields as yamlTop does, and how deep it nests; ok is false when b
// is not one JSON object.
func jsonTop(b []byte) (top map[string]any, nesting int, ok bool) {
	type frame struct {
		obj, wantKey bool
		key          string
	}
	top, meta := map[string]any{}, map[string]any{}
	top["metadata"] = meta
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(b))
	for first := true; ; first = false {
		tok, err := dec.Token()
		if err == io.EOF && !first && len(stack) == 0 {
			return top, nesting, true
		}
		if err != nil || (first && tok != json.Delim('{')) || (!first && len(stack) == 0) {
			return nil, 0, false
		}
		if d, isDelim := tok.(json.Delim); isDelim && (d == '{' || d == '[') {
			stack = append(stack, frame{obj: d == '{', wantKey: d == '{'})
			nesting = max(nesting, len(stack))
			continue
		}
		n := len(stack)
		if in := &stack[n-1]; in.obj && in.wantKey && tok != json.Delim('}') {
			in.key, _ = tok.(string)
			in.wantKey = false
			continue
		}
		if tok == json.Delim('}') || tok == json.Delim(']') {
			stack = stack[:n-1]
		} else if s, isString := tok.(string); isString {
			switch {
			case n == 1 && isTopField(stack[0].key):
				top[stack[0].key] = s
			case n == 2 && stack[0].key == "metadata" && stack[1].obj && isMetadataField(stack[1].key):
				meta[stack[1].key] = s
			}
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true // the value of its key is read
		}
	}
}

// jsonNesting is how deep b, JSON, nests objects and arrays, the outermost the first
// level, as encoding/json's scanner counts it.
func jsonNesting(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
