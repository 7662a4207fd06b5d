package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// Limits on hostile input. The API server refuses request bodies over 3 MiB, so no
// real manifest document is larger.
const (
	DefaultMaxDocumentBytes = 3 << 20
	DefaultMaxFileBytes     = 64 << 20
)

var separator = regexp.MustCompile(`^---(\s.*)?$`)

// SplitDocuments cuts a YAML stream at its "---" lines, as every renderer does.
// Documents are numbered as a reader counts them: a blank or comment-only preamble
// before the first "---" is not a document; empty documents further on keep their
// number (and are skipped later).
func SplitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sawSeparator := false
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, line := range lines {
		if separator.Match(bytes.TrimRight(line, "\r\n")) {
			if sawSeparator || !isBlank(cur.Bytes()) {
				docs = append(docs, bytes.Clone(cur.Bytes()))
			}
			sawSeparator = true
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	if !isBlank(cur.Bytes()) || len(docs) == 0 {
		docs = append(docs, bytes.Clone(cur.Bytes()))
	}
	return docs
}

// isBlank reports whether a document holds only whitespace, comments or "..." ends.
func isBlank(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || t == "..." {
			continue
		}
		return false
	}
	return true
}

// decodeDocument parses one document the way kubectl does (YAML 1.1 through
// sigs.k8s.io/yaml, a JSON document as JSON) and returns its objects, flattening
// lists. Errors never quote the document's content: it may hold secrets.
func decodeDocument(source string, doc int, data []byte, maxBytes int) ([]Object, []Failure) {
	if len(data) > maxBytes {
		return nil, []Failure{{Source: source, Doc: doc, Reason: reason.TooLarge,
			Message: fmt.Sprintf("document is %s, over the %s limit per document (the API server refuses larger objects)", size(len(data)), size(maxBytes))}}
	}
	if isBlank(data) {
		return nil, nil
	}
	v, failure := readDocument(data)
	if failure != nil {
		failure.Source, failure.Doc = source, doc
		return nil, []Failure{*failure}
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, []Failure{{Source: source, Doc: doc, Reason: reason.Invalid,
			Message: fmt.Sprintf("document is a %s, not a Kubernetes object (a mapping with apiVersion and kind)", jsonType(v))}}
	}
	if items, isList := listItems(m); isList {
		var objs []Object
		var fails []Failure
		for i, item := range items {
			im, ok := item.(map[string]any)
			if !ok {
				fails = append(fails, Failure{Source: source, Doc: doc, Item: i + 1, Reason: reason.Invalid,
					Message: fmt.Sprintf("list item is a %s, not a Kubernetes object", jsonType(item))})
				continue
			}
			o, f := newObject(source, doc, i+1, im)
			if f != nil {
				fails = append(fails, *f)
				continue
			}
			objs = append(objs, o)
		}
		return objs, fails
	}
	o, f := newObject(source, doc, 0, m)
	if f != nil {
		return nil, []Failure{*f}
	}
	return []Object{o}, nil
}

// readDocument reads one document as kubectl does: YAML 1.1 through sigs.k8s.io/yaml
// and apimachinery's JSON (decodeYAML, where it can), a JSON document as JSON, as
// kubectl's YAMLOrJSONDecoder does (YAML knows no "\/" escape, and takes no duplicate
// key). A document of null is nil. A document nested deeper than maxNesting, which
// kubectl's JSON refuses, is a too-large failure with the identity its top level
// gives; one deeper than the YAML parser itself reads (10,000 levels of indentation or
// of flow collections) is malformed YAML, in the parser's words.
func readDocument(data []byte) (any, *Failure) {
	js := bytes.TrimSpace(data)
	if len(js) == 0 || js[0] != '{' || !json.Valid(js) {
		doc, v, ok := decodeYAML(data)
		if ok {
			return v, nil
		}
		if deeperThan(doc, maxNesting) {
			return nil, tooDeep(yamlTop(doc))
		}
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			// JSON (which YAML reads as flow collections) deeper than the parser reads.
			if top, nesting, isJSON := jsonTop(bytes.TrimSpace(data)); isJSON && nesting > maxNesting {
				return nil, tooDeep(top)
			}
			return nil, &Failure{Reason: reason.Malformed,
				Message: "malformed YAML: " + strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")}
		}
		js = bytes.TrimSpace(js)
	}
	if string(js) == "null" {
		return nil, nil
	}
	var v any
	if err := utiljson.Unmarshal(js, &v); err != nil {
		return nil, &Failure{Reason: reason.Malformed, Message: "malformed document: " + err.Error()}
	}
	return v, nil
}

// listItems recognises kind: List (and typed lists such as ConfigMapList) with items.
func listItems(m map[string]any) ([]any, bool) {
	kind, _ := m["kind"].(string)
	if !strings.HasSuffix(kind, "List") {
		return nil, false
	}
	items, ok := m["items"].([]any)
	if !ok {
		_, has := m["items"]
		if has && m["items"] != nil {
			return nil, false
		}
		return nil, kind == "List"
	}
	return items, true
}

func newObject(source string, doc, item int, m map[string]any) (Object, *Failure) {
	fail := func(why reason.Reason, format string, args ...any) (Object, *Failure) {
		return Object{}, &Failure{Source: source, Doc: doc, Item: item, Reason: why, Message: fmt.Sprintf(format, args...)}
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	u := &unstructured.Unstructured{Object: m}
	name := u.GetName()
	label := ""
	if name != "" {
		label = fmt.Sprintf(" (metadata.name %q)", name)
	}
	switch {
	case apiVersion == "" && kind == "":
		return fail(reason.Invalid, "document has no apiVersion and no kind%s: every Kubernetes object needs both", label)
	case apiVersion == "":
		return fail(reason.Invalid, "%s%s has no apiVersion", kind, label)
	case kind == "":
		return fail(reason.Invalid, "object of apiVersion %s%s has no kind", apiVersion, label)
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return fail(reason.Invalid, "%s%s: invalid apiVersion %q: %v", kind, label, apiVersion, err)
	}
	meta, ok := m["metadata"].(map[string]any)
	if !ok && m["metadata"] != nil {
		return fail(reason.Invalid, "%s%s: metadata is not a mapping", kind, label)
	}
	for _, field := range []string{"name", "namespace"} {
		if v, present := meta[field]; present && v != nil {
			if _, isString := v.(string); !isString {
				return fail(reason.Invalid, "%s: metadata.%s is a %s, not a string: quote it (YAML reads y, yes, no, on, off and numbers as non-strings)", kind, field, jsonType(v))
			}
		}
	}
	if name == "" && u.GetGenerateName() == "" {
		id := object.IDOf(u)
		o, f := fail(reason.Invalid, "%s has no metadata.name", kind)
		f.ID = &id
		return o, f
	}
	return Object{Obj: u, Source: source, Doc: doc, Item: item}, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
