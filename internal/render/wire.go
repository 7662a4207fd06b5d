package render

import (
	"github.com/drift-gitops/drift/internal/appset"

	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// workRequest is what drift sends a render worker on stdin.
type workRequest struct {
	// Root is the repository's work tree root; the worker opens the repository there.
	Root string
	// Commit is the snapshot's commit, "" for the work tree.
	Commit string
	Spec   Spec
	Limits Limits
	// Lookup is drift's read-only proxy for a Helm target's lookup, or nil.
	Lookup *lookupEndpoint
	// AppSet, when set, asks for an ApplicationSet's expansion instead of a rendering.
	AppSet *appset.Request
	// Batch, when set, asks for the rendering of each of these specs instead of Spec,
	// one frame each (writeFrame), in order.
	Batch []Spec
}

// workResponse is what a render worker writes on stdout.
type workResponse struct {
	// Result is encoded whole, so fields added to it travel without a change here.
	Result *Result
	// Err is Render's error: the target could not be attempted (for an
	// ApplicationSet, why it cannot be expanded).
	Err string
	// AppSet is an ApplicationSet's expansion.
	AppSet *appset.Result
}

var registerGob sync.Once

// encodeRequest writes a request in gob, which keeps the Go type of every inline Helm
// value (int stays int, 1.0 stays float64): a template prints and compares them as
// the in-process rendering would.
func encodeRequest(req workRequest) ([]byte, error) {
	registerValueTypes()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(req); err != nil {
		return nil, fmt.Errorf("the render options of %s cannot be sent to the render worker: %w", displayDir(cleanDir(req.Spec.Path)), err)
	}
	return buf.Bytes(), nil
}

func decodeRequest(r io.Reader) (workRequest, error) {
	registerValueTypes()
	var req workRequest
	err := gob.NewDecoder(r).Decode(&req)
	return req, err
}

// registerValueTypes tells gob the composite types Helm values hold inside `any`
// (scalars are known to gob already).
func registerValueTypes() {
	registerGob.Do(func() {
		gob.Register(map[string]any{})
		gob.Register([]any{})
	})
}

// encodeResponse writes a response as JSON. Objects are encoded by unstructured's own
// JSON methods and decoded by apimachinery's JSON, which gives int64 to integers and
// float64 to the rest: exactly the types an in-process rendering holds, since every
// renderer decodes its documents that way.
func encodeResponse(resp workResponse) ([]byte, error) {
	return json.Marshal(resp)
}

func decodeResponse(data []byte) (workResponse, error) {
	var resp workResponse
	err := json.Unmarshal(data, &resp)
	return resp, err
}
