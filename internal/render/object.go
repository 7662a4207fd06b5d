package render

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
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
	// Notes are things the renderer knows about the object that the report shows
	// beside it (a Helm hook, for one).
	Notes []Note
}

// Note is a remark about a rendered object, with a stable reason.
type Note struct {
	Reason  reason.Reason
	Message string
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
