package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/object"
)

// Object is one rendered Kubernetes object and where it came from.
type Object struct {
	Obj *unstructured.Unstructured
	// Source is the slash-separated path of the file, relative to the repository root.
	Source string
	// Doc is the 1-based index of the YAML document in the file.
	Doc int
	// Item is the 1-based index inside a flattened List, 0 otherwise.
	Item int
}

// ID is the object's identity as written (namespace not yet defaulted).
func (o Object) ID() object.ID { return object.IDOf(o.Obj) }

// Where names the object's place for messages: "apps/web.yaml document 2".
func (o Object) Where() string { return where(o.Source, o.Doc, o.Item) }

// Failure is a document or object that could not be rendered.
type Failure struct {
	Source string
	Doc    int
	Item   int
	// ID is set when the object's identity could be read.
	ID      *object.ID
	Reason  string
	Message string
}

// Where names the failure's place for messages.
func (f Failure) Where() string { return where(f.Source, f.Doc, f.Item) }

func (f Failure) Error() string { return f.Where() + ": " + f.Message }

// Reasons of render failures.
const (
	ReasonMalformed = "malformed"
	ReasonTooLarge  = "too-large"
	ReasonDuplicate = "duplicate"
	ReasonInvalid   = "invalid"
)

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
}
