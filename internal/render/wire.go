package render

import (
	"github.com/drift-gitops/drift/internal/appset"

	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
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
	// Objects are Result's objects, each encoded on its own (encodeResponse), so
	// that both sides encode and decode them side by side.
	Objects []json.RawMessage `json:",omitempty"`
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
	if resp.Result != nil && len(resp.Result.Objects) > 0 {
		res := *resp.Result
		raw := make([]json.RawMessage, len(res.Objects))
		if err := inParallel(len(raw), func(i int) (err error) {
			raw[i], err = json.Marshal(res.Objects[i])
			return err
		}); err != nil {
			return nil, err
		}
		res.Objects = nil
		resp.Result, resp.Objects = &res, raw
	}
	return json.Marshal(resp)
}

func decodeResponse(data []byte) (workResponse, error) {
	var resp workResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return resp, err
	}
	if len(resp.Objects) > 0 {
		if resp.Result == nil {
			return resp, fmt.Errorf("the render worker sent objects without a result")
		}
		objs := make([]Object, len(resp.Objects))
		if err := inParallel(len(objs), func(i int) error { return json.Unmarshal(resp.Objects[i], &objs[i]) }); err != nil {
			return resp, err
		}
		resp.Result.Objects, resp.Objects = objs, nil
	}
	return resp, nil
}

// inParallel calls f for 0 to n-1, in GOMAXPROCS goroutines each taking a run of
// indexes; the error joins the first each goroutine met.
func inParallel(n int, f func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				if err := f(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(slices.DeleteFunc(errs, func(err error) bool { return err == nil })...)
}
