package render

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/gobwas/glob"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/source"
)

// Options control plain rendering.
type Options struct {
	// Paths are slash-separated and relative to the repository root; "" is the root.
	Paths []string
	// MaxDocumentBytes and MaxFileBytes cap hostile input (defaults apply when zero).
	MaxDocumentBytes int
	MaxFileBytes     int
	// Directory reads each directory as Argo CD reads an Application's directory
	// source: not recursively unless Recurse, with its Include and Exclude globs over
	// paths relative to the directory (nil: recursively, every manifest).
	Directory *DirectoryOptions
	// ObjectsOnly leaves out documents without apiVersion or kind, and names their
	// files in a note (Spec.ObjectsOnly).
	ObjectsOnly bool
	// Hold keeps each object as its JSON (FromJSON) from the moment its document is
	// decoded, so a large rendering is never held as maps all at once; Get decodes
	// an object when something reads it.
	Hold bool
}

// maxDepth bounds directory recursion, so symlinked directory loops end.
const maxDepth = 64

// Plain reads every .yaml, .yml and .json file under the paths, recursively and in
// lexical order. Directories and files whose names start with a dot (.git, .github,
// .pre-commit-config.yaml, ...) are never manifests unless named directly.
func Plain(fsys fs.FS, opts Options) (*Result, error) {
	if opts.MaxDocumentBytes == 0 {
		opts.MaxDocumentBytes = DefaultMaxDocumentBytes
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	w := &walker{fsys: fsys, opts: opts, seen: map[string]bool{}, dirs: map[string]bool{}, res: &Result{}}
	w.startDecoding()
	defer w.decode() // a failed walk's result is dropped; the decoders end anyway
	paths := append([]string(nil), opts.Paths...)
	if len(paths) == 0 {
		paths = []string{""}
	}
	sort.Strings(paths)
	w.res.Inputs.Trees = paths
	for _, p := range paths {
		name := cmp.Or(p, ".")
		info, err := fs.Stat(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", name, err)
		}
		if info.IsDir() {
			w.base = name
			if err := w.dir(name, 0); err != nil {
				return nil, err
			}
			continue
		}
		if !isManifest(name) {
			return nil, fmt.Errorf("%s is not a manifest file: drift reads .yaml, .yml and .json files", name)
		}
		w.file(name, info.Size())
	}
	w.decode()
	markDuplicates(w.res)
	return w.res, nil
}

type walker struct {
	fsys fs.FS
	opts Options
	// seen and dirs hold the real paths (symlinks resolved) of the files and
	// directories read, so a file reached by two names is read once and a symlinked
	// directory loop ends.
	seen map[string]bool
	dirs map[string]bool
	res  *Result
	// base is the directory being read, which Argo CD's globs are relative to.
	base string
	// parts are what the walk found, for decode; work hands the files read to the
	// decoders.
	parts    []*part
	work     chan *part
	decoders sync.WaitGroup
}

// realPath is name with its symlinks resolved, where the file system can say.
func (w *walker) realPath(name string) string {
	if rp, ok := w.fsys.(interface{ RealPath(string) (string, error) }); ok {
		if real, err := rp.RealPath(name); err == nil {
			return real
		}
	}
	return name
}

func isManifest(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func (w *walker) dir(name string, depth int) error {
	if depth > maxDepth {
		w.fail(Failure{Source: name, Reason: reason.Invalid,
			Message: fmt.Sprintf("directory nesting deeper than %d levels (a symlink loop?): not read", maxDepth)})
		return nil
	}
	real := w.realPath(name)
	if w.dirs[real] {
		note := fmt.Sprintf("%s leads to %s, which is already read: its files are previewed once", name, real)
		if name == real {
			note = fmt.Sprintf("%s was already read through a symlink to it: its files are previewed once", name)
		}
		w.res.Notes = append(w.res.Notes, note)
		return nil
	}
	w.dirs[real] = true
	entries, err := fs.ReadDir(w.fsys, name)
	if err != nil {
		if !source.IsOutside(err) {
			return fmt.Errorf("failed to list %s: %w", name, err)
		}
		w.fail(Failure{Source: name, Reason: reason.Refused, Message: "not read: " + unwrapPathError(err)})
		return nil
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		child := path.Join(name, e.Name())
		isDir := e.IsDir()
		size := int64(-1)
		if e.Type()&fs.ModeSymlink != 0 {
			info, err := fs.Stat(w.fsys, child)
			if err != nil {
				if isManifest(child) || !errors.Is(err, fs.ErrNotExist) {
					why := reason.Invalid
					if source.IsOutside(err) {
						why = reason.Refused
					}
					w.fail(Failure{Source: child, Reason: why,
						Message: "symlink cannot be followed: " + unwrapPathError(err)})
				}
				continue
			}
			isDir = info.IsDir()
			size = info.Size()
		}
		if isDir {
			if d := w.opts.Directory; d != nil && !d.Recurse {
				continue
			}
			if err := w.dir(child, depth+1); err != nil {
				return err
			}
			continue
		}
		if isManifest(child) && w.selected(child) {
			if size < 0 {
				if info, err := e.Info(); err == nil {
					size = info.Size()
				}
			}
			w.file(child, size)
		}
	}
	return nil
}

// selected applies Argo CD's include and exclude globs to a file under the base
// directory, matched as Argo CD matches them (github.com/gobwas/glob, '*' crossing
// '/', {a,b} alternatives); a glob that does not compile matches nothing, as in Argo CD.
func (w *walker) selected(name string) bool {
	d := w.opts.Directory
	if d == nil {
		return true
	}
	rel := strings.TrimPrefix(name, w.base+"/")
	if w.base == "." {
		rel = name
	}
	if d.Exclude != "" && globMatch(d.Exclude, rel) {
		return false
	}
	return d.Include == "" || globMatch(d.Include, rel)
}

func globMatch(pattern, s string) bool {
	g, err := glob.Compile(pattern)
	return err == nil && g.Match(s)
}

// pathCause is err without the fs.PathError around it (the caller names the path),
// still wrapping what it wraps (source.IsOutside looks for it).
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (w *walker) file(name string, size int64) {
	real := w.realPath(name)
	if w.seen[real] {
		return
	}
	w.seen[real] = true
	if size > int64(w.opts.MaxFileBytes) {
		w.fail(Failure{Source: name, Reason: reason.TooLarge,
			Message: fmt.Sprintf("file is %s, over the %s limit: not read", SizeOf(size), SizeOf(int64(w.opts.MaxFileBytes)))})
		return
	}
	data, err := fs.ReadFile(w.fsys, name)
	if err != nil {
		why := reason.Invalid
		if source.IsOutside(err) {
			why = reason.Refused
		}
		w.fail(Failure{Source: name, Reason: why, Message: "cannot be read: " + unwrapPathError(err)})
		return
	}
	p := &part{name: name, data: data}
	w.parts = append(w.parts, p)
	w.work <- p
}

// part is what the walk found, in order: a failure, or a file read whose documents
// are decoded after the walk, side by side (decode).
type part struct {
	fail  *Failure
	name  string
	data  []byte
	objs  []Object
	fails []Failure
	// notObjects says the file holds documents that are no Kubernetes object
	// (Options.ObjectsOnly).
	notObjects bool
}

func (w *walker) fail(f Failure) { w.parts = append(w.parts, &part{fail: &f}) }

// startDecoding starts GOMAXPROCS decoders of the files the walk reads, which
// decode while the walk goes on (the files are read one by one: the snapshot's reads
// are not concurrent).
func (w *walker) startDecoding() {
	work := make(chan *part, 64)
	w.work = work
	for range runtime.GOMAXPROCS(0) {
		w.decoders.Go(func() {
			for p := range work {
				p.objs, p.fails, p.notObjects = decodeFile(p.name, p.data, w.opts.MaxDocumentBytes, w.opts.ObjectsOnly)
				p.data = nil
				if w.opts.Hold {
					for i, o := range p.objs {
						p.objs[i] = hold(o)
					}
				}
			}
		})
	}
}

// hold is o, decoded in this process, held as its JSON (FromJSON) with its place and
// notes: the JSON a render worker writes for it (encoding/json, keys sorted). An
// object that does not encode stays as it is, for the encoder to report.
func hold(o Object) Object {
	u := o.Get()
	js, err := json.Marshal(u.Object)
	if err != nil {
		return o
	}
	h := FromJSON(js, object.IDOf(u), u.GetName())
	h.Source, h.Doc, h.Item, h.Notes = o.Source, o.Doc, o.Item, o.Notes
	return h
}

// decode waits for the decoders and adds every part to the result in the order the
// walk found it, so the result is the same however the decoding went; once.
func (w *walker) decode() {
	if w.work == nil {
		return
	}
	close(w.work)
	w.work = nil
	w.decoders.Wait()
	var others []string
	for _, p := range w.parts {
		if p.fail != nil {
			w.res.Failures = append(w.res.Failures, *p.fail)
			continue
		}
		w.res.Objects = append(w.res.Objects, p.objs...)
		w.res.Failures = append(w.res.Failures, p.fails...)
		if p.notObjects {
			others = append(others, p.name)
		}
	}
	w.parts = nil
	if len(others) > 0 {
		w.res.Notes = append(w.res.Notes, fmt.Sprintf("%s %s YAML that is no Kubernetes object (no apiVersion or kind): not previewed, as nothing applies it",
			strings.Join(others, ", "), plural(len(others), "holds", "hold")))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// decodeFile decodes the documents of one manifest file; with objectsOnly, a
// document without apiVersion or kind is left out, and notObjects says so.
func decodeFile(name string, data []byte, maxDocument int, objectsOnly bool) (objs []Object, fails []Failure, notObjects bool) {
	data, err := decodeText(data)
	if err != nil {
		return nil, []Failure{{Source: name, Reason: reason.Malformed, Message: "not read: the file " + err.Error()}}, false
	}
	for i, doc := range SplitDocuments(data) {
		if objectsOnly && notAnObject(doc, maxDocument) {
			notObjects = true
			continue
		}
		o, f := decodeDocument(name, i+1, doc, maxDocument)
		objs = append(objs, o...)
		fails = append(fails, f...)
	}
	return objs, fails, notObjects
}

// notAnObject reports whether a document reads as a mapping without apiVersion or
// kind: YAML that is no Kubernetes object. What cannot be read is the decoder's to
// say.
func notAnObject(doc []byte, maxDocument int) bool {
	if len(doc) > maxDocument || isBlank(doc) {
		return false
	}
	v, failure := readDocument(doc)
	if failure != nil {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v != nil // a list or a scalar: no object either
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	return apiVersion == "" || kind == ""
}

// SizeOf writes a size in bytes as a message says it: 12 MiB.
func SizeOf(n int64) string { return size(int(n)) }

// markDuplicates turns every object whose identity (group, kind, namespace, name) is
// written more than once into a failure that names the other places.
func markDuplicates(res *Result) {
	byKey := map[object.Key][]int{}
	var keys []object.Key // in order of first appearance, so failures come out in a stable order
	for i, o := range res.Objects {
		if o.Name() == "" {
			continue // generateName: every apply creates a new object
		}
		k := o.ID().Key()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	drop := map[int]bool{}
	for _, k := range keys {
		idx := byKey[k]
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			o := res.Objects[i]
			id := o.ID()
			res.Failures = append(res.Failures, Failure{Source: o.Source, Doc: o.Doc, Item: o.Item, ID: &id, Reason: reason.Duplicate,
				Message: fmt.Sprintf("%s is defined more than once: also at %s; keep one definition", id.Display(), otherPlaces(res.Objects, idx, i))})
			drop[i] = true
		}
	}
	if len(drop) == 0 {
		return
	}
	kept := res.Objects[:0]
	for i, o := range res.Objects {
		if !drop[i] {
			kept = append(kept, o)
		}
	}
	res.Objects = kept
}

// maxPlacesNamed bounds how many other places a duplicate's message names, so that n
// copies of one object give n messages of bounded size, not n².
const maxPlacesNamed = 3

// otherPlaces names the places of idx other than i: the first few, then how many more.
func otherPlaces(objs []Object, idx []int, i int) string {
	var names []string
	for _, j := range idx {
		if j == i {
			continue
		}
		if len(names) == maxPlacesNamed {
			return fmt.Sprintf("%s and %d more", strings.Join(names, ", "), len(idx)-1-maxPlacesNamed)
		}
		names = append(names, objs[j].Where())
	}
	return strings.Join(names, ", ")
}

// HoldsObject reports whether data holds a YAML or JSON document with apiVersion
// and kind: a Kubernetes object a controller could apply from the file.
func HoldsObject(data []byte) bool {
	data, err := decodeText(data)
	if err != nil {
		return false
	}
	for _, doc := range SplitDocuments(data) {
		if isBlank(doc) {
			continue
		}
		v, failure := readDocument(doc)
		if failure != nil {
			continue
		}
		if m, ok := v.(map[string]any); ok {
			apiVersion, _ := m["apiVersion"].(string)
			kind, _ := m["kind"].(string)
			if apiVersion != "" && kind != "" {
				return true
			}
		}
	}
	return false
}
