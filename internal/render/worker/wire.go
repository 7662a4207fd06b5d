package worker

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// WorkRequest is what drift sends a render worker on stdin.
type WorkRequest struct {
	// Root is the repository's work tree root; the worker opens the repository there.
	Root string
	// Commit is the snapshot's commit, "" for the work tree.
	Commit string
	Spec   render.Spec
	Limits render.Limits
	// Lookup is drift's read-only proxy for a Helm target's lookup, or nil.
	Lookup *LookupEndpoint
	// AppSet, when set, asks for an ApplicationSet's expansion instead of a rendering.
	AppSet *appset.Request
	// Batch, when set, asks for the rendering of each of these specs instead of Spec,
	// one frame each (writeFrame), in order.
	Batch []render.Spec
}

// WorkResponse is what a render worker writes on stdout.
type WorkResponse struct {
	// Result is encoded whole but for its objects, so fields added to it travel
	// without a change here; its objects follow it, each on its own
	// (EncodeResponse).
	Result *render.Result
	// Err is Render's error: the target could not be attempted (for an
	// ApplicationSet, why it cannot be expanded).
	Err string
	// AppSet is an ApplicationSet's expansion.
	AppSet *appset.Result
}

// LookupEndpoint is where a render worker's `lookup` reads the cluster: drift's
// read-only proxy on loopback, and the token it asks for. It travels in the work
// request, never in the worker's environment.
type LookupEndpoint struct {
	URL   string
	Token string
}

// Config is the worker's connection for Helm's engine: the proxy, no credentials of
// drift's.
func (e *LookupEndpoint) Config() *rest.Config {
	if e == nil {
		return nil
	}
	return &rest.Config{Host: e.URL, BearerToken: e.Token, Timeout: 30 * time.Second}
}

var registerGob sync.Once

// EncodeRequest writes a request in gob, which keeps the Go type of every inline Helm
// value (int stays int, 1.0 stays float64): a template prints and compares them as
// the in-process rendering would.
func EncodeRequest(req WorkRequest) ([]byte, error) {
	registerValueTypes()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(req); err != nil {
		return nil, fmt.Errorf("the render options of %s cannot be sent to the render worker: %w", render.TargetSource(req.Spec), err)
	}
	return buf.Bytes(), nil
}

func DecodeRequest(r io.Reader) (WorkRequest, error) {
	registerValueTypes()
	var req WorkRequest
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

// A response on the wire is its JSON (without the result's objects), then each object
// of the result: its content as JSON, its identity and name, and its place, each part
// preceded by its length (a uvarint). The worker encodes the objects side by side;
// drift checks each one's JSON side by side and holds it so (render.FromJSON), and neither end
// reads the whole response as one JSON document (which would check every object's
// bytes once more, one after the other).
//
// An object's content is encoded as JSON and decoded, when it is read (render.Object.Get), by
// apimachinery's JSON, as unstructured's own JSON methods do, which gives int64 to
// integers and float64 to the rest: exactly the types an in-process rendering holds,
// since every renderer decodes its documents that way.
//
// One object's problem stays that object's: one that does not encode is sent as a
// failure naming it, in its place, and one that drift cannot read (nested deeper than
// maxNesting, which encoding/json's json.Valid and Object.Get's decoder refuse)
// becomes a failure naming it when it arrives; the other objects cross as they are.
func EncodeResponse(resp WorkResponse) ([]byte, error) {
	var objs []render.Object
	if resp.Result != nil && len(resp.Result.Objects) > 0 {
		res := *resp.Result
		objs, res.Objects = res.Objects, nil
		resp.Result = &res
	}
	parts := make([][]byte, len(objs))
	unsent := make([]bool, len(objs))
	_ = inParallel(len(objs), func(i int) (err error) {
		parts[i], err = encodeObject(objs[i])
		unsent[i] = err != nil
		return nil
	})
	for i, o := range objs {
		if unsent[i] {
			// The encoder's error may quote a value of the object: only its place is said.
			resp.Result.Failures = append(slices.Clip(resp.Result.Failures), render.Failure{Source: o.Source, Doc: o.Doc, Item: o.Item, ID: render.KnownID(o),
				Reason: reason.RenderFailed, Message: "the object does not encode as JSON: this is a bug in drift, please report it"})
		}
	}
	parts = slices.DeleteFunc(parts, func(p []byte) bool { return p == nil })
	head, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	size := binary.MaxVarintLen64 * (2 + len(parts))
	for _, p := range append(parts, head) {
		size += len(p)
	}
	out := make([]byte, 0, size)
	out = appendPart(out, head)
	out = binary.AppendUvarint(out, uint64(len(parts)))
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// encodeObject is one object on the wire: its content, its identity (group, version,
// kind, namespace, name or generateName, then metadata.name), then its place (source,
// document, item, notes).
//
// An object still held as a worker sent it (a rendering drift keeps for the next
// run) is written as it was sent, without decoding it.
func encodeObject(o render.Object) ([]byte, error) {
	content, id, name, held := o.Held()
	if !held {
		u := o.Get()
		if u == nil {
			return nil, fmt.Errorf("%s: no object to send", o.Where())
		}
		var err error
		if content, err = json.Marshal(u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Where(), err)
		}
		id, name = object.IDOf(u), u.GetName()
	}
	var notes []byte
	if len(o.Notes) > 0 {
		var err error
		if notes, err = json.Marshal(o.Notes); err != nil {
			return nil, err
		}
	}
	strs := []string{id.Group, id.Version, id.Kind, id.Namespace, id.Name, name, o.Source}
	size := len(content) + len(notes) + (len(strs)+4)*binary.MaxVarintLen64
	for _, s := range strs {
		size += len(s)
	}
	out := make([]byte, 0, size)
	out = appendPart(out, content)
	for _, s := range strs {
		out = appendPart(out, []byte(s))
	}
	out = binary.AppendUvarint(out, uint64(o.Doc))
	out = binary.AppendUvarint(out, uint64(o.Item))
	return appendPart(out, notes), nil
}

// appendPart appends p to b, preceded by its length.
func appendPart(b, p []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(p))), p...)
}

func DecodeResponse(data []byte) (WorkResponse, error) {
	var resp WorkResponse
	r := wireReader{data: data}
	if err := json.Unmarshal(r.part(), &resp); err != nil {
		return resp, err
	}
	n := r.uvarint()
	if r.err == nil && n > uint64(len(data)) {
		r.err = errShortResponse
	}
	if r.err != nil {
		return resp, r.err
	}
	if n == 0 {
		return resp, nil
	}
	if resp.Result == nil {
		return resp, fmt.Errorf("the render worker sent objects without a result")
	}
	// Where each object starts and ends: its parts' lengths, read one after the other.
	// Each object is held as its JSON (Object.Get decodes it when it is read), which is
	// checked here, side by side.
	type span struct{ content, notes []byte }
	spans := make([]span, n)
	objs := make([]render.Object, n)
	for i := range spans {
		content := r.part()
		id := object.ID{Group: r.str(), Version: r.str(), Kind: r.str(), Namespace: r.str(), Name: string(r.part())}
		name := id.Name
		if string(r.part()) != name { // generateName: no name
			name = ""
		}
		objs[i] = render.FromJSON(content, id, name)
		objs[i].Source = r.str()
		objs[i].Doc, objs[i].Item = int(r.uvarint()), int(r.uvarint())
		spans[i] = span{content: content, notes: r.part()}
	}
	if r.err != nil {
		return resp, r.err
	}
	if len(r.data) != 0 {
		return resp, fmt.Errorf("the render worker's answer has %d bytes past its objects", len(r.data))
	}
	unread := make([]*render.Failure, n)
	if err := inParallel(len(objs), func(i int) error {
		if !render.ValidJSONObject(spans[i].content) {
			f := render.Unread(objs[i], spans[i].content)
			unread[i] = &f
			return nil
		}
		if len(spans[i].notes) > 0 {
			return json.Unmarshal(spans[i].notes, &objs[i].Notes)
		}
		return nil
	}); err != nil {
		return resp, err
	}
	kept := objs[:0]
	for i, o := range objs {
		if unread[i] != nil {
			resp.Result.Failures = append(resp.Result.Failures, *unread[i])
			continue
		}
		kept = append(kept, o)
	}
	resp.Result.Objects = kept
	return resp, nil
}

// errShortResponse is a response that ends before what it says it holds.
var errShortResponse = errors.New("the render worker's answer ends early")

// wireReader reads a response's parts; the first that cannot be read sets err, and
// every read after it gives nothing.
type wireReader struct {
	data []byte
	err  error
	seen map[string]string
}

func (r *wireReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.data)
	if n <= 0 {
		r.err = errShortResponse
		return 0
	}
	r.data = r.data[n:]
	return v
}

// str reads a part as a string; the strings it read before are reused (kinds,
// namespaces and sources repeat across objects).
func (r *wireReader) str() string {
	p := r.part()
	if s, ok := r.seen[string(p)]; ok {
		return s
	}
	if r.seen == nil {
		r.seen = map[string]string{}
	}
	s := string(p)
	r.seen[s] = s
	return s
}

func (r *wireReader) part() []byte {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.data)) {
		r.err = errShortResponse
	}
	if r.err != nil {
		return nil
	}
	p := r.data[:n:n]
	r.data = r.data[n:]
	return p
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

// Hold is o as drift holds an object the render worker sent: its JSON, decoded when
// read; the error is the failure the wire makes of an object it cannot carry. Tests
// use it to check that a reader decodes no object it need not.
func Hold(o render.Object) (render.Object, error) {
	data, err := EncodeResponse(WorkResponse{Result: &render.Result{Objects: []render.Object{o}}})
	if err != nil {
		return render.Object{}, err
	}
	resp, err := DecodeResponse(data)
	if err != nil {
		return render.Object{}, err
	}
	if len(resp.Result.Objects) == 0 {
		return render.Object{}, resp.Result.Failures[0]
	}
	return resp.Result.Objects[0], nil
}
