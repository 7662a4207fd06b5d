package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// Object is one rendered Kubernetes object and where it came from.
//
// An object rendered in drift's own process holds it decoded (Obj). One the render
// worker sent holds its JSON instead, and its identity, until something reads the
// object: a run reads its objects one by one as it sends them, so a large rendering
// is not held as maps (about ten times its JSON) all at once. Read the object with
// Get, which decodes it the first time; Obj only builds an Object.
type Object struct {
	// Obj is the decoded object of an Object built in process; read it with Get.
	Obj *unstructured.Unstructured
	// held is the JSON of an object that came from the render worker, shared by the
	// Object's copies (as a decoded one's map is); nil otherwise.
	held *held
	// Source is the slash-separated path of the file, relative to the repository root.
	Source string
	// Doc is the 1-based index of the YAML document in the file.
	Doc int
	// Item is the 1-based index inside a flattened List, 0 otherwise.
	Item int
	// Notes are things the renderer knows about the object that the report shows
	// beside it (a Helm hook, for one).
	Notes []Note
}

// Note is a remark about a rendered object, with a stable reason.
type Note struct {
	Reason  reason.Reason
	Message string
	// Changed, with reason.Encrypted, says the encrypted document differs from the
	// base's (or the base has none): its values change, though they cannot be shown.
	Changed bool `json:",omitempty"`
}

// held is an object as the render worker sent it: its JSON, with its identity and
// name read from it there, and the object it decodes to once read.
type held struct {
	id   object.ID
	name string
	mu   sync.Mutex
	json []byte
	obj  atomic.Pointer[unstructured.Unstructured]
}

// Get is the object: Obj, or what its JSON decodes to (decoded once, and shared by the
// Object's copies). It is nil for an Object that holds none (Present).
func (o Object) Get() *unstructured.Unstructured {
	if o.Obj != nil || o.held == nil {
		return o.Obj
	}
	h := o.held
	if u := h.obj.Load(); u != nil {
		return u
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if u := h.obj.Load(); u != nil {
		return u
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(h.json, &m); err != nil {
		// The wire checked the JSON (ValidJSONObject) before holding it, with
		// encoding/json's scanner, whose depth limit (maxNesting) this decoder's
		// shares. The decoder's error may quote a value of the object: only its
		// place is said.
		panic(fmt.Sprintf("%s: the render worker's object does not decode as JSON", o.Where()))
	}
	u := &unstructured.Unstructured{Object: m}
	h.obj.Store(u)
	h.json = nil
	return u
}

// Same reports whether o and p hold the same object with the same notes: the same
// JSON, as the render worker sent it or as the decoded object encodes (a held object
// and a decoded one may differ in bytes alone, and then are not the same). It decodes
// nothing.
func (o Object) Same(p Object) bool {
	a, b := o.encoded(), p.encoded()
	return a != nil && b != nil && bytes.Equal(a, b) && slices.Equal(o.Notes, p.Notes)
}

// encoded is the object's JSON: the worker's while it is held so, else the decoded
// object encoded; nil when it holds none or cannot be encoded.
func (o Object) encoded() []byte {
	if o.held != nil && o.Obj == nil {
		o.held.mu.Lock()
		data := o.held.json
		o.held.mu.Unlock()
		if data != nil {
			return data
		}
	}
	u := o.Get()
	if u == nil {
		return nil
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil
	}
	return data
}

// With is o holding obj in place of its object (a decrypted or filled copy): the
// same place and notes, nothing of the worker's JSON.
func (o Object) With(obj *unstructured.Unstructured) Object {
	return Object{Obj: obj, Source: o.Source, Doc: o.Doc, Item: o.Item, Notes: o.Notes}
}

// Present reports whether the Object holds an object, decoded or not.
func (o Object) Present() bool { return o.Obj != nil || o.held != nil }

// Drop lets the object go from this copy of the Object: Get is nil from then on.
func (o *Object) Drop() { o.Obj, o.held = nil, nil }

// Decoded reports whether the object is held decoded: built in drift's process, or
// read (Get) since the render worker sent it.
func (o Object) Decoded() bool { return o.decoded() != nil }

// FromJSON is an Object holding the JSON of an object the render worker sent, with
// the identity and name (empty for a generateName) the worker read from it: Get
// decodes it the first time it is read. The JSON must be one JSON object
// (ValidJSONObject).
func FromJSON(js []byte, id object.ID, name string) Object {
	return Object{held: &held{json: js, id: id, name: name}}
}

// Held is the JSON of an object held as the render worker sent it, with the
// identity and name (empty for a generateName) read from it there: what FromJSON
// was given. ok is false for an object decoded since, or built in process (Get
// gives it).
func (o Object) Held() (js []byte, id object.ID, name string, ok bool) {
	if o.Obj != nil || o.held == nil {
		return nil, object.ID{}, "", false
	}
	h := o.held
	h.mu.Lock()
	js = h.json
	h.mu.Unlock()
	if js == nil {
		return nil, object.ID{}, "", false
	}
	return js, h.id, h.name, true
}

// KnownID is o's identity when it holds an object that names its kind, nil otherwise.
func KnownID(o Object) *object.ID {
	if !o.Present() {
		return nil
	}
	if id := o.ID(); id.Kind != "" && id.Version != "" {
		return &id
	}
	return nil
}

// ValidJSONObject reports whether b is one JSON object, which apimachinery's JSON
// decodes into a map: json.Valid, and braces around it.
func ValidJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}' && json.Valid(b)
}

// decoded is the object if it is decoded, nil while it is held as JSON.
func (o Object) decoded() *unstructured.Unstructured {
	if o.Obj != nil || o.held == nil {
		return o.Obj
	}
	return o.held.obj.Load()
}

// ID is the object's identity as written (namespace not yet defaulted), read without
// decoding an object held as JSON.
func (o Object) ID() object.ID {
	if u := o.decoded(); u != nil || o.held == nil {
		return object.IDOf(u)
	}
	return o.held.id
}

// Name is the object's metadata.name ("" when it has only a generateName), read
// without decoding an object held as JSON.
func (o Object) Name() string {
	if u := o.decoded(); u != nil || o.held == nil {
		return u.GetName()
	}
	return o.held.name
}

// Mentions reports whether the object may hold one of strs as a whole key or string
// value: false only when it is held as JSON in which none of them is written. A reader that
// looks for a field few objects have passes over the others without decoding them.
func (o Object) Mentions(strs ...string) bool {
	if o.decoded() != nil || o.held == nil {
		return true
	}
	h := o.held
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.json == nil { // decoded since
		return true
	}
	for _, s := range strs {
		// As the worker's encoder wrote it, escapes included.
		quoted, _ := json.Marshal(s)
		if bytes.Contains(h.json, quoted) {
			return true
		}
	}
	return false
}

// Where names the object's place for messages: "apps/web.yaml document 2".
func (o Object) Where() string { return where(o.Source, o.Doc, o.Item) }

// Failure is a document or object that could not be rendered.
type Failure struct {
	Source string
	Doc    int
	Item   int
	// ID is set when the object's identity could be read.
	ID      *object.ID
	Reason  reason.Reason
	Message string
}

// Where names the failure's place for messages.
func (f Failure) Where() string { return where(f.Source, f.Doc, f.Item) }

func (f Failure) Error() string { return f.Where() + ": " + f.Message }

func where(source string, doc, item int) string {
	switch {
	case doc == 0:
		return source
	case item == 0:
		return fmt.Sprintf("%s document %d", source, doc)
	default:
		return fmt.Sprintf("%s document %d item %d", source, doc, item)
	}
}

// Result is what rendering produced: the objects, and the failures beside them.
type Result struct {
	Objects  []Object
	Failures []Failure
	// Notes are remarks about the rendering as a whole (a directory reached twice
	// through a symlink) that the report shows beside the target.
	Notes []string
	// Inputs are what the rendering read from the repository.
	Inputs Inputs
}

// Inputs are the parts of the repository a rendering depends on: a change to any of
// them can change its output.
type Inputs struct {
	// Trees are directories whose whole content counts (a plain directory, a chart).
	Trees []string
	// Files are single files read (kustomize's resources and patches, values files).
	Files []string
	// Dirs are directories whose listing was read: a file added to or removed from
	// them counts, their subdirectories do not.
	Dirs []string
}

// Touched reports whether a change to the repository path p can change the output.
func (in Inputs) Touched(p string) bool {
	for _, t := range in.Trees {
		if t == "" || t == "." || p == t || strings.HasPrefix(p, t+"/") {
			return true
		}
	}
	if slices.Contains(in.Files, p) {
		return true
	}
	dir := path.Dir(p)
	for _, d := range in.Dirs {
		if dir == d || (d == "." && dir == ".") {
			return true
		}
	}
	return false
}
